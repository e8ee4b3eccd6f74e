#if canImport(Glibc)
import Glibc
#endif

/// systemd's notify protocol (`Type=notify`, `WatchdogSec=`) over `$NOTIFY_SOCKET`.
/// Does nothing when not started by systemd.
public final class SystemdNotifier {
    private let socketPath: String?
    /// Half the watchdog interval, when systemd asked for watchdog pings.
    public let watchdogIntervalMilliseconds: Int64?

    public init(environment: [String: String]) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if let usec = environment["WATCHDOG_USEC"].flatMap(Int64.init), usec > 0,
           environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true {
            watchdogIntervalMilliseconds = max(1, usec / 2000)
        } else {
            watchdogIntervalMilliseconds = nil
        }
    }

    public var isActive: Bool { socketPath != nil }

    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    public func status(_ status: String) { send("STATUS=\(status)") }
    public func reloading() { send("RELOADING=1") }
    public func stopping() { send("STOPPING=1") }
    public func watchdog() { send("WATCHDOG=1") }

    /// Sends one datagram; failures are ignored (systemd may be gone, nothing to do about it).
    public func send(_ message: String) {
        guard let socketPath else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        // An '@' prefix names an abstract socket: its first byte is NUL.
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count)
        let bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sa, length) }
            }
        }
    }
}
