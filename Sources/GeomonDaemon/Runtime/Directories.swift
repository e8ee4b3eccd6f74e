#if canImport(Glibc)
import Glibc
#endif

/// Creates `path` and any missing parents with `mode` (like `mkdir -p -m`); an existing
/// directory is fine. Throws the path that could not be made and the system's reason.
public func makeDirectories(_ path: String, mode: UInt32 = 0o700) throws(DirectoryError) {
    guard !path.isEmpty else { return }
    var prefix = path.hasPrefix("/") ? "/" : ""
    for part in path.split(separator: "/", omittingEmptySubsequences: true) {
        prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + part
        if mkdir(prefix, mode_t(mode)) != 0 {
            let code = errno
            var info = stat()
            guard code == EEXIST, stat(prefix, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw DirectoryError(path: prefix, reason: String(cString: strerror(code == EEXIST ? ENOTDIR : code)))
            }
        }
    }
}

/// A directory that could not be created.
public struct DirectoryError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot create \(path): \(reason)" }
}

/// A new private directory (mode 0700) under `$TMPDIR` (default `/tmp`), named from `prefix`,
/// the process id and a random suffix; the caller removes it.
public func makeTemporaryDirectory(prefix: String) throws(DirectoryError) -> String {
    var base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    if base.isEmpty { base = "/tmp" }
    while base.count > 1, base.hasSuffix("/") { base.removeLast() }
    let path = base + "/\(prefix)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    guard mkdir(path, 0o700) == 0 else { throw DirectoryError(path: path, reason: String(cString: strerror(errno))) }
    return path
}
