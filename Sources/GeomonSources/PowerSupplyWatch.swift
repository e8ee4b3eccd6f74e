#if canImport(Glibc)
import Glibc
#endif

/// Tells its owner when the power-supply class (`/sys/class/power_supply`, or a directory laid
/// out like it) may have changed — without polling: an idle daemon sleeps in the kernel on its
/// descriptors and wakes only when something was said.
///
/// Two listeners, each a descriptor of its own (a service polls them; `drain(fd:)` reads what
/// one has):
/// - the kernel's uevents (a `NETLINK_KOBJECT_UEVENT` socket bound to the kernel's multicast
///   group): a supply's driver sends `change` for `SUBSYSTEM=power_supply` when it is plugged,
///   unplugged or its fuel gauge has news (`add`/`remove` when a supply comes or goes). Sysfs
///   attributes make no inotify events, so on the real class only this speaks. Creating the
///   socket fails in some containers and namespaces (`ueventFailure` says why; nothing is
///   logged here), and a socket in a network namespace the kernel does not broadcast to is
///   created but never hears anything;
/// - inotify on the directory and on each supply's directory in it (watched anew when one is
///   created), so a directory laid out like the class on an ordinary file system (tests; a fake
///   class bind-mounted in a private mount namespace) is watched too.
///
/// Reading never blocks: both descriptors are non-blocking and close-on-exec, and each `drain`
/// reads a bounded number of messages (what is left keeps the descriptor readable).
public final class PowerSupplyWatch {
    /// Why neither listener could be set up.
    public struct Failure: Error, CustomStringConvertible, Sendable, Equatable {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// The directory watched.
    public let directory: String
    /// The kernel's uevent socket; nil when it could not be created (`ueventFailure`) or was
    /// not asked for.
    public private(set) var ueventDescriptor: Int32?
    /// The inotify descriptor; nil when inotify or the directory's watch failed
    /// (`directoryFailure`).
    public private(set) var directoryDescriptor: Int32?
    /// Why there is no uevent socket (nil: there is one, or none was asked for).
    public let ueventFailure: String?
    /// Why the directory is not watched through inotify (nil: it is).
    public let directoryFailure: String?

    /// The descriptors to poll for `POLLIN`.
    public var fileDescriptors: [Int32] { [ueventDescriptor, directoryDescriptor].compactMap { $0 } }

    /// inotify's watch descriptors: the directory's (name "") and each supply's (its name).
    private var watches: [Int32: String] = [:]

    /// Datagrams (uevents) or reads (inotify) handled per `drain`.
    public static let maxReadsPerDrain = 256

    // Netlink, which Glibc's Swift module does not declare (linux/netlink.h).
    static let familyNetlink: Int32 = 16            // AF_NETLINK
    static let protocolKobjectUevent: Int32 = 15    // NETLINK_KOBJECT_UEVENT
    static let kernelUeventGroup: UInt32 = 1        // the kernel's uevents (2: udev's)
    /// `struct sockaddr_nl`: family (u16), pad (u16), pid (u32), groups (u32).
    static let netlinkAddressSize = 12

    /// The inotify events that can mean a supply changed, came or went.
    static let directoryEvents = UInt32(bitPattern: IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM)

    /// Opens the listeners on `directory`; throws when neither could be set up.
    /// - Parameter uevents: listen to the kernel's uevents too (tests of the directory watch
    ///   leave it off: the machine's own uevents would speak in them).
    public init(directory: String, uevents: Bool = true) throws(Failure) {
        self.directory = directory
        var socketFD: Int32?
        var ueventFailure: String?
        if uevents {
            switch Self.openUeventSocket() {
            case let .success(fd): socketFD = fd
            case let .failure(failure): ueventFailure = failure.description
            }
        }
        var inotifyFD: Int32?
        var directoryFailure: String?
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if fd < 0 {
            directoryFailure = "inotify: \(String(cString: strerror(errno)))"
        } else {
            let wd = inotify_add_watch(fd, directory, Self.directoryEvents | UInt32(bitPattern: IN_ONLYDIR))
            if wd < 0 {
                directoryFailure = "cannot watch \(directory): \(String(cString: strerror(errno)))"
                close(fd)
            } else {
                inotifyFD = fd
                watches = [wd: ""]
            }
        }
        ueventDescriptor = socketFD
        directoryDescriptor = inotifyFD
        self.ueventFailure = ueventFailure
        self.directoryFailure = directoryFailure
        guard socketFD != nil || inotifyFD != nil else {
            throw Failure(description: [ueventFailure.map { "uevents: \($0)" }, directoryFailure].compactMap { $0 }.joined(separator: "; "))
        }
        watchSupplies()
    }

    deinit {
        if let ueventDescriptor { close(ueventDescriptor) }
        if let directoryDescriptor { close(directoryDescriptor) }
    }

    /// Reads what `fd` (one of `fileDescriptors`) has, without blocking. True when the class
    /// may have changed: a `power_supply` uevent, an inotify event in the directory, or lost
    /// messages (a full queue: what was lost may have been one).
    public func drain(fd: Int32) -> Bool {
        if fd == ueventDescriptor { return drainUevents(fd) }
        if fd == directoryDescriptor { return drainDirectory(fd) }
        return false
    }

    // MARK: - Uevents

    static func openUeventSocket() -> Result<Int32, Failure> {
        let type = Int32(bitPattern: SOCK_DGRAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        let fd = socket(familyNetlink, type, protocolKobjectUevent)
        guard fd >= 0 else { return .failure(Failure(description: "netlink socket: \(String(cString: strerror(errno)))")) }
        var address = sockaddr_storage()
        withUnsafeMutableBytes(of: &address) { raw in
            raw.storeBytes(of: UInt16(familyNetlink), toByteOffset: 0, as: UInt16.self)
            raw.storeBytes(of: UInt32(0), toByteOffset: 4, as: UInt32.self)   // pid: the kernel assigns one
            raw.storeBytes(of: kernelUeventGroup, toByteOffset: 8, as: UInt32.self)
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(netlinkAddressSize)) }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            return .failure(Failure(description: "netlink bind: \(reason)"))
        }
        return .success(fd)
    }

    private func drainUevents(_ fd: Int32) -> Bool {
        var changed = false
        var buffer = [UInt8](repeating: 0, count: 8192)
        var sender = sockaddr_storage()
        for _ in 0..<Self.maxReadsPerDrain {
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let n = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &sender) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, bytes.baseAddress, bytes.count, 0, $0, &length) }
                }
            }
            if n < 0 {
                if errno == EINTR { continue }
                // The socket's queue overflowed: uevents were lost, a supply's among them maybe.
                if errno == ENOBUFS { changed = true; continue }
                break  // EAGAIN: drained (or an error the next readiness meets again)
            }
            // Only the kernel (port 0) speaks on its group; anything else is not a uevent.
            let port = withUnsafeBytes(of: &sender) { $0.load(fromByteOffset: 4, as: UInt32.self) }
            guard port == 0 else { continue }
            if Self.isPowerSupplyUevent(buffer[..<min(n, buffer.count)]) { changed = true }
        }
        return changed
    }

    /// Whether a kernel uevent (`action@devpath`, then NUL-separated `KEY=VALUE` strings) is a
    /// power supply's: it has `SUBSYSTEM=power_supply`. udev's own messages (`libudev` and a
    /// binary header; group 2, which this socket does not join) are not.
    public static func isPowerSupplyUevent<Bytes: Collection>(_ message: Bytes) -> Bool where Bytes.Element == UInt8 {
        let fields = message.split(separator: 0, omittingEmptySubsequences: true)
        guard let header = fields.first, header.contains(UInt8(ascii: "@")) else { return false }
        let wanted = Array("SUBSYSTEM=power_supply".utf8)
        return fields.dropFirst().contains { $0.elementsEqual(wanted) }
    }

    // MARK: - The directory

    /// Watches each supply directory in the directory (those already watched keep their watch).
    private func watchSupplies() {
        guard directoryDescriptor != nil, let names = PowerSupply.entries(in: directory) else { return }
        for name in names { watchSupply(name) }
    }

    /// Watches `directory/name` if it is a directory (on the class: a link to one).
    private func watchSupply(_ name: String) {
        guard let fd = directoryDescriptor, !name.isEmpty, !name.hasPrefix(".") else { return }
        let wd = inotify_add_watch(fd, directory + "/" + name, Self.directoryEvents | UInt32(bitPattern: IN_ONLYDIR))
        if wd >= 0 { watches[wd] = name }
    }

    private func drainDirectory(_ fd: Int32) -> Bool {
        var changed = false
        var rescan = false
        // Room for many events (each 16 bytes and its name, NUL-padded).
        let capacity = 4096
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: MemoryLayout<Int32>.alignment)
        defer { buffer.deallocate() }
        for _ in 0..<Self.maxReadsPerDrain {
            let n = read(fd, buffer.baseAddress, capacity)
            if n < 0 {
                if errno == EINTR { continue }
                break  // EAGAIN: drained
            }
            if n == 0 { break }
            var offset = 0
            while offset + 16 <= n {
                let wd = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let length = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let nameBytes = UnsafeRawBufferPointer(rebasing: buffer[(offset + 16)..<min(offset + 16 + length, n)])
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                offset += 16 + length
                if mask & UInt32(bitPattern: IN_Q_OVERFLOW) != 0 {
                    // Events were lost: anything may have changed, new supplies among it.
                    changed = true
                    rescan = true
                    continue
                }
                if mask & UInt32(bitPattern: IN_IGNORED) != 0 {
                    // The watch is gone (its directory removed); the removal itself is reported
                    // by the parent's IN_DELETE.
                    watches[wd] = nil
                    continue
                }
                changed = true
                if watches[wd] == "", mask & UInt32(bitPattern: IN_CREATE | IN_MOVED_TO) != 0 {
                    watchSupply(name)
                }
            }
        }
        if rescan { watchSupplies() }
        return changed
    }
}
