#if canImport(Glibc)
import Glibc
#endif

/// StrictModes-style checks of the files geomon reads code or configuration from (profiles,
/// GeoJSON files, hook and coarse-source programs) and of the database's directory.
///
/// The rule (docs/security.md):
/// - Always: the file itself, after following symlinks, must not be group- or world-writable.
/// - When running as root (effective uid 0), additionally every component of the path, walked
///   from `/` one name at a time and following each symlink where it occurs, must be owned by
///   root; directories must not be group- or world-writable, except root-owned directories with
///   the sticky bit (`/tmp`), where no one else can rename or replace an entry they do not own.
///   A symlink must be owned by root, and its target is walked the same way, so no path can
///   resolve through a link into a place another user controls.
///
/// `--insecure-permissions` turns all of this off (`FileTrust(enforced: false)`).
public struct FileTrust: Sendable, Equatable {
    /// False when the user passed `--insecure-permissions`.
    public var enforced: Bool
    /// The effective uid whose files are trusted (root is always trusted).
    public var uid: UInt32

    /// `uid` defaults to the process's effective uid.
    public init(enforced: Bool = true, uid: UInt32? = nil) {
        self.enforced = enforced
        self.uid = uid ?? geteuid()
    }

    /// No checks at all.
    public static let insecure = FileTrust(enforced: false)

    /// The hint appended to every refusal.
    public static let overrideHint = "or pass --insecure-permissions to accept it"

    /// Why `path` (absolute, or relative to the current directory) must not be trusted, or nil
    /// when it may be. `what` names it in the message ("profile", "GeoJSON file"); `shown` is
    /// the path as the user wrote it. A path that does not exist is not a trust problem (the
    /// caller reports it); nil is returned for it.
    public func problem(_ path: String, what: String, shown: String? = nil) -> String? {
        guard enforced else { return nil }
        let display = shown ?? path
        if uid == 0 {
            return walk(absolute(path), what: what, shown: display)
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = UInt32(info.st_mode) & 0o7777
        if mode & 0o022 != 0 {
            return "\(what) '\(display)' is group- or world-writable (mode \(octal(mode))); others could change it: chmod go-w \(display), \(Self.overrideHint)"
        }
        return nil
    }

    /// The walk for root: each component from `/`, symlinks followed where they occur.
    private func walk(_ path: String, what: String, shown: String) -> String? {
        var pending = components(path)
        var current = "/"
        if let problem = checkDirectory("/", what: what, shown: shown) { return problem }
        var hops = 0
        while !pending.isEmpty {
            let name = pending.removeFirst()
            if name == "." { continue }
            if name == ".." {
                current = PathText.directory(of: current)
                continue
            }
            let next = current == "/" ? "/" + name : current + "/" + name
            var info = stat()
            guard lstat(next, &info) == 0 else { return nil }
            let type = UInt32(info.st_mode) & UInt32(S_IFMT)
            if type == UInt32(S_IFLNK) {
                hops += 1
                if hops > 40 { return "\(what) '\(shown)': too many levels of symbolic links" }
                if info.st_uid != 0 && info.st_uid != uid {
                    return "\(what) '\(shown)' resolves through the symlink \(next), owned by uid \(info.st_uid), not root; \(Self.overrideHint)"
                }
                guard let target = readLink(next) else { return nil }
                if target.hasPrefix("/") { current = "/" }
                pending = components(target) + pending
                continue
            }
            let mode = UInt32(info.st_mode) & 0o7777
            if info.st_uid != 0 && info.st_uid != uid {
                let part = pending.isEmpty ? "it is" : "its directory \(next) is"
                return "\(what) '\(shown)': \(part) owned by uid \(info.st_uid), not root; geomon runs as root and would trust another user's file: chown root \(next), \(Self.overrideHint)"
            }
            if type == UInt32(S_IFDIR) {
                let stickyRoot = mode & 0o1000 != 0 && info.st_uid == 0
                if mode & 0o022 != 0 && !stickyRoot {
                    let part = pending.isEmpty ? "it" : "its directory \(next)"
                    return "\(what) '\(shown)': \(part) is group- or world-writable (mode \(octal(mode))); others could replace it: chmod go-w \(next), \(Self.overrideHint)"
                }
            } else if mode & 0o022 != 0 {
                return "\(what) '\(shown)' is group- or world-writable (mode \(octal(mode))); others could change it: chmod go-w \(shown), \(Self.overrideHint)"
            }
            current = next
        }
        return nil
    }

    private func checkDirectory(_ path: String, what: String, shown: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = UInt32(info.st_mode) & 0o7777
        if info.st_uid != 0 && info.st_uid != uid {
            return "\(what) '\(shown)': its directory \(path) is owned by uid \(info.st_uid), not root; \(Self.overrideHint)"
        }
        if mode & 0o022 != 0 && !(mode & 0o1000 != 0 && info.st_uid == 0) {
            return "\(what) '\(shown)': its directory \(path) is group- or world-writable (mode \(octal(mode))); \(Self.overrideHint)"
        }
        return nil
    }

    private func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return PathText.join(cwd, path)
    }

    private func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    private func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = readlink(path, &buffer, 4096)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func octal(_ mode: UInt32) -> String {
        let text = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}
