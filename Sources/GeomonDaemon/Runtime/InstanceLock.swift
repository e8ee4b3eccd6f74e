#if canImport(Glibc)
import Glibc
#endif

/// One running instance per database: an exclusive `flock` on `<db>.lock`, held for the
/// process's lifetime (the kernel drops it when the process dies, even on `kill -9`).
public final class InstanceLock {
    public struct Busy: Error, CustomStringConvertible {
        public var path: String
        /// The holder's pid, and what it is (`run`, `replay`, …).
        public var holder: String?
        public var role: String?
        public var description: String {
            "another geomon instance is already running on this database (lock \(path)\(holder.map { ", pid \($0)" } ?? "")\(role.map { ", geomon \($0)" } ?? ""))"
        }
    }

    public struct Failed: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "cannot create lock file \(path): \(reason)" }
    }

    public let path: String
    private let fd: Int32

    /// - Parameter role: what holds it (`run`, `replay`, a maintenance command), written after
    ///   the pid: other commands signal only a `run` (`daemon(databasePath:)`).
    public init(databasePath: String, role: String = "run") throws {
        path = databasePath + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failed(path: path, reason: String(cString: strerror(errno))) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let busy = errno == EWOULDBLOCK
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = read(fd, &buffer, buffer.count)
            close(fd)
            if busy {
                let (holder, role) = Self.contents(n > 0 ? buffer[0..<n] : [])
                throw Busy(path: path, holder: holder, role: role)
            }
            throw Failed(path: path, reason: String(cString: strerror(errno)))
        }
        _ = ftruncate(fd, 0)
        let pid = Array("\(getpid()) \(role)\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    /// The pid of the process holding the lock of `databasePath`, when one does.
    public static func holder(databasePath: String) -> Int32? {
        holderAndRole(databasePath: databasePath)?.pid
    }

    /// The process holding the lock of `databasePath` and its role (`run` for a lock written
    /// before roles were).
    public static func holderAndRole(databasePath: String) -> (pid: Int32, role: String)? {
        guard isHeld(databasePath: databasePath) else { return nil }
        let fd = open(databasePath + ".lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        let (holder, role) = contents(buffer[0..<n])
        guard let pid = holder.flatMap({ Int32($0) }) else { return nil }
        return (pid, role ?? "run")
    }

    /// A lock file's `pid role` (either nil when absent).
    private static func contents(_ bytes: ArraySlice<UInt8>) -> (pid: String?, role: String?) {
        let words = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        return (words.first.map(String.init), words.count > 1 ? String(words[1]) : nil)
    }

    /// True when a live process holds the lock of `databasePath` (probe without taking it).
    public static func isHeld(databasePath: String) -> Bool {
        let fd = open(databasePath + ".lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

extension String {
    var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
