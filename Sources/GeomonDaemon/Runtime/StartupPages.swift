#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore

/// The pages of code and read-only data a daemon touched while it started (reading the
/// profile, opening the database, connecting) and will not touch again while it idles, handed
/// back to the kernel: `madvise(MADV_PAGEOUT)` on every file-backed mapping that is not
/// writable (the binary's text and read-only data, the shared libraries' — pages another
/// process also maps stay). What the loop still uses faults back in when it next runs, from
/// the page cache if the kernel kept it there. Only memory changes, never a result.
public enum StartupPages {
    /// Releases them; returns the resident file-backed kilobytes before and after (nil where
    /// `/proc` cannot say, or the kernel has no `MADV_PAGEOUT`, Linux < 5.4).
    @discardableResult
    public static func release() -> (beforeKB: Int, afterKB: Int)? {
        guard let before = residentFileKB(), let maps = readFile("/proc/self/maps") else { return nil }
        var released = false
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // address perms offset dev inode path: file-backed (a path, an inode), not writable.
            guard fields.count >= 6, fields[5].hasPrefix("/"), fields[4] != "0" else { continue }
            let perms = fields[1]
            guard perms.hasPrefix("r"), !perms.contains("w") else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16), end > start,
                  let pointer = UnsafeMutableRawPointer(bitPattern: start) else { continue }
            if madvise(pointer, Int(end - start), MADV_PAGEOUT) == 0 { released = true }
        }
        guard released, let after = residentFileKB() else { return nil }
        return (before, after)
    }

    /// `RssFile` of `/proc/self/status`, in kB.
    public static func residentFileKB() -> Int? {
        guard let status = readFile("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("RssFile:") {
            return Int(line.dropFirst("RssFile:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    private static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// `geomon run`'s release of its start-up pages (`StartupPages`), `after` the start and again
/// after each reload, when the loop has settled into what it does while idle.
public final class StartupPagesService: EventSource {
    public let name = "startup-pages"
    private let after: Duration
    private let log: Log
    private var at: Int64?

    public init(after: Duration = .seconds(10), log: Log) {
        self.after = after
        self.log = log
    }

    public var nextWake: Int64? { at }

    public func start(_ driver: DriverContext) throws {
        at = driver.monotonic(after: after)
    }

    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        at = driver.monotonic(after: after)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        at = nil
        if let (before, after) = StartupPages.release() {
            log.info("start-up pages released", ["rss_file_kb.before": "\(before)", "rss_file_kb.after": "\(after)"])
        }
    }
}
