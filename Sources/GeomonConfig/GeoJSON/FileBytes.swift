import CGeomonShims
import GeomonFormat
import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// How far to grow a collection that a file read front to back fills, one item per feature,
/// say: to what the file likely holds (the items so far, scaled by the bytes read, with 10 %
/// to spare), at least twice and at most four times its room. It is copied fewer times than
/// at every doubling (each copy also touches fresh pages), and a file whose later part holds
/// more per byte reserves at most four times what it has used.
public enum StreamGrowth {
    /// The capacity to reserve when `count` items fill `capacity` after `read` of `total` bytes.
    public static func room(count: Int, capacity: Int, read: Int, total: Int) -> Int {
        let room = max(capacity, 8)
        var wanted = 2 * room
        if count >= 256, read > 0 {
            let expected = Double(count) * Double(total) / Double(read) * 1.1
            wanted = max(wanted, Int(min(expected, Double(4 * room))))
        }
        return wanted
    }
}

/// A file mapped read-only, read once from start to end: the pages behind the reader are
/// dropped as it goes (`release(before:)`), so a file of any size costs a window of its pages,
/// not its size. Dropped pages come back from the page cache if they are read again (error
/// positions), so nothing is lost, only re-read.
///
/// A file rewritten in place while it is read (truncated by an editor or a shell's `>`)
/// would kill the process with SIGBUS at the first page past its new end. The mapping is
/// guarded (`geomon_mapping_guard`): such a page reads as zeros, and `changedWhileRead`
/// says the bytes read are not one version of the file, as it does for a file whose size
/// or modification time changed since it was opened. A file renamed over is no change:
/// the mapping keeps the version that was opened.
public final class MappedFile {
    public let size: Int
    private let base: UnsafeMutableRawPointer?
    private var released = 0
    /// The open file (kept for `changedWhileRead`); -1 for a copy.
    private let descriptor: Int32
    /// The file's modification time when it was opened.
    private let modified: timespec
    /// The guard's slot (-1: none).
    private let guardSlot: Int32
    /// Pages kept behind the reader (re-reads of a feature's own bytes stay in memory).
    static let window = 4 << 20

    /// Maps `path`; the reason on failure.
    public static func open(_ path: String) -> Result<MappedFile, MappedFile.Failure> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(Failure(reason: String(cString: strerror(errno)))) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            return .failure(Failure(reason: reason))
        }
        let size = Int(info.st_size)
        guard info.st_mode & S_IFMT == S_IFREG, size > 0 else {
            close(fd)
            if info.st_mode & S_IFMT == S_IFDIR { return .failure(Failure(reason: "is a directory")) }
            guard info.st_mode & S_IFMT == S_IFREG else {
                // A pipe or device: read it whole.
                switch FileBytes.read(path) {
                case .success(let bytes): return .success(MappedFile(copying: bytes))
                case .failure(let reason): return .failure(Failure(reason: reason))
                }
            }
            return .success(MappedFile(copying: []))
        }
        guard let pointer = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), pointer != MAP_FAILED else {
            let reason = String(cString: strerror(errno))
            close(fd)
            return .failure(Failure(reason: reason))
        }
        _ = madvise(pointer, size, MADV_SEQUENTIAL)
        return .success(MappedFile(base: pointer, size: size, descriptor: fd, modified: info.st_mtim))
    }

    public struct Failure: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    private let copy: [UInt8]?

    private init(base: UnsafeMutableRawPointer, size: Int, descriptor: Int32, modified: timespec) {
        self.base = base
        self.size = size
        self.descriptor = descriptor
        self.modified = modified
        guardSlot = geomon_mapping_guard(base, size)
        copy = nil
    }

    private init(copying bytes: [UInt8]) {
        base = nil
        size = bytes.count
        descriptor = -1
        modified = timespec()
        guardSlot = -1
        copy = bytes
    }

    deinit {
        _ = geomon_mapping_unguard(guardSlot)
        if let base { munmap(base, size) }
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether the file changed in place since it was opened: a page past a new end read as
    /// zeros, or its size or modification time is no longer the one it had. The bytes read
    /// are then not one version of the file.
    public var changedWhileRead: Bool {
        guard descriptor >= 0 else { return false }
        if geomon_mapping_faulted(guardSlot) != 0 { return true }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return true }
        return Int(info.st_size) != size || info.st_mtim.tv_sec != modified.tv_sec || info.st_mtim.tv_nsec != modified.tv_nsec
    }

    /// The bytes, valid during `body`.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let copy { return try copy.withUnsafeBufferPointer(body) }
        return try body(UnsafeBufferPointer(start: base?.assumingMemoryBound(to: UInt8.self), count: size))
    }

    /// How far the reader has come: the last offset given to `release(before:)`.
    public private(set) var position = 0

    /// Gives the pages more than `window` before `offset` back to the kernel.
    public func release(before offset: Int) {
        position = offset
        guard let base else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = (offset - Self.window) / page * page
        guard end - released >= Self.window else { return }
        _ = madvise(base + released, end - released, MADV_DONTNEED)
        released = end
    }
}

/// Reading a whole file into memory with plain POSIX calls.
enum FileBytes {
    enum Outcome {
        case success([UInt8])
        case failure(String)
    }

    static func read(_ path: String, limit: Int = Int.max) -> Outcome {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(String(cString: strerror(errno))) }
        if info.st_mode & S_IFMT == S_IFDIR { return .failure("is a directory") }
        let size = Int(info.st_size)
        if size > limit { return .failure("file is larger than \(limit) bytes") }
        var failure: String?
        // Read straight into uninitialized storage (no memset of a possibly huge buffer).
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var filled = 0
            while filled < size, let base = buffer.baseAddress {
                let got = Glibc.read(fd, base + filled, size - filled)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    break
                }
                if got == 0 { break }
                filled += got
            }
            initialized = filled
        }
        if let failure { return .failure(failure) }
        // Files that grew (or /proc-like files with size 0) are read to the end.
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { break }
            bytes.append(contentsOf: chunk[0..<got])
            if bytes.count > limit { return .failure("file is larger than \(limit) bytes") }
        }
        return .success(bytes)
    }
}
