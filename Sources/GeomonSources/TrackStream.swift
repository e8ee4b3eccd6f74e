#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore

/// A recorded track read as a stream: the file is read in chunks of `chunkSize` bytes and its
/// fixes are handed out one by one, so memory does not grow with the file. The line formats
/// (NMEA, JSON lines, gpsd JSON) stream; a GPX document is parsed whole at its end (GPX files
/// are one XML tree, and small next to the line logs). The format is detected from the first
/// chunk as `TrackReader` does (`TrackFormat.detect`), and parsed by the same `TrackParser`.
///
/// Fixes come in file order, as the parsers produce them; what was skipped is counted in
/// `skipped` as the stream goes.
public struct TrackStream: IteratorProtocol, Sequence {
    public let path: String
    public let format: TrackFormat
    public static let defaultChunkSize = 1 << 20

    private let file: OpenFile
    private var fd: Int32 { file.fd }
    private var parser: TrackParser
    private var ready: [Fix] = []
    private var readyIndex = 0
    private var chunk: [UInt8]
    private var ended: Bool
    /// Set when reading failed midway (the fixes before it are still handed out).
    public private(set) var readError: String?
    /// False for a pipe, a terminal or a device: what can be read only once.
    public let isRegularFile: Bool

    /// Opens `path` and detects its format. Throws like `TrackReader.read(path:)`: missing,
    /// unreadable or a directory with `isMissing`; empty or in no known format without.
    public init(path: String, chunkSize: Int = TrackStream.defaultChunkSize) throws(TrackError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        file = OpenFile(fd: fd)
        guard fd >= 0 else {
            let code = errno
            throw TrackError(path: path, message: code == ENOENT ? "no such file" : "cannot read file (\(String(cString: strerror(code))))", isMissing: true)
        }
        var info = stat()
        let statted = fstat(fd, &info) == 0
        isRegularFile = statted && info.st_mode & S_IFMT == S_IFREG
        if statted, info.st_mode & S_IFMT == S_IFDIR {
            throw TrackError(path: path, message: "is a directory", isMissing: true)
        }
        // The first chunk decides the format (detection looks at its first 64 KiB).
        var chunk = [UInt8](repeating: 0, count: Swift.max(4096, chunkSize))
        var atEnd = false
        var first: [UInt8] = []
        while first.count < 65_536 {
            let n = Self.readSome(fd, into: &chunk)
            if n < 0 {
                throw TrackError(path: path, message: "cannot read file (\(String(cString: strerror(errno))))", isMissing: true)
            }
            if n == 0 { atEnd = true; break }
            first += chunk[0..<n]
        }
        guard !first.isEmpty else {
            throw TrackError(path: path, message: "empty file", isMissing: false)
        }
        guard let format = first.withUnsafeBufferPointer({ TrackFormat.detect($0) }) else {
            throw TrackError(path: path, message: "not a track: expected NMEA 0183, GPX, JSON lines or gpsd JSON", isMissing: false)
        }
        self.format = format
        self.chunk = chunk
        ended = atEnd
        parser = TrackParser(format: format)
        first.withUnsafeBufferPointer { parser.feed($0, into: &ready) }
        if ended { parser.finish(into: &ready) }
    }

    /// Counts of skipped input by reason, so far.
    public var skipped: [String: Int] { parser.skipped }

    /// The next fix in file order; nil at the end (the file is closed then).
    public mutating func next() -> Fix? {
        while readyIndex == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
            guard !ended else { closeFile(); return nil }
            let n = Self.readSome(fd, into: &chunk)
            if n <= 0 {
                if n < 0 { readError = String(cString: strerror(errno)) }
                ended = true
                parser.finish(into: &ready)
                continue
            }
            chunk.withUnsafeBufferPointer { parser.feed(UnsafeBufferPointer(rebasing: $0[0..<n]), into: &ready) }
        }
        defer { readyIndex += 1 }
        return ready[readyIndex]
    }

    private func closeFile() { file.close() }

    /// One read(2) into `buffer`, retried on EINTR: the byte count, 0 at the end, -1 on error.
    private static func readSome(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            return n
        }
    }
}

/// A file descriptor closed when no stream holds it any more (a stream left before its end).
private final class OpenFile {
    private(set) var fd: Int32
    init(fd: Int32) { self.fd = fd }
    func close() {
        if fd >= 0 { _ = Glibc.close(fd); fd = -1 }
    }
    deinit { close() }
}
