#if canImport(Glibc)
import Glibc
#endif

/// A single-threaded poll(2) loop: file descriptors with handlers, one wake-up pipe that other
/// threads (hook completions) and signal handlers write to, and a timeout computed by the
/// caller from its deadlines. Between inputs and deadlines the process sleeps in the kernel.
public final class EventLoop {
    public typealias Handler = (_ revents: Int16) -> Void

    private var watched: [(fd: Int32, events: Int16, handler: Handler)] = []
    private let wakeRead: Int32
    /// Written from other threads and signal handlers; a byte per wake-up.
    public let wakeWrite: Int32
    /// Called on the loop thread after a wake-up byte (or signal byte) arrives.
    public var onWake: ((_ bytes: [UInt8]) -> Void)?

    public struct Failed: Error, CustomStringConvertible {
        public var call: String
        public var errnoValue: Int32
        public var description: String { "\(call) failed: \(String(cString: strerror(errnoValue)))" }
    }

    public init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Failed(call: "pipe", errnoValue: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Watches `fd` for `events` (POLLIN by default); replaces an earlier watch of the same fd.
    public func watch(_ fd: Int32, events: Int16? = nil, _ handler: @escaping Handler) {
        let events = events ?? Int16(POLLIN)
        unwatch(fd)
        watched.append((fd, events, handler))
    }

    public func unwatch(_ fd: Int32) {
        watched.removeAll { $0.fd == fd }
    }

    /// Wakes the loop from any thread.
    public func wake(_ byte: UInt8 = 0) {
        EventLoop.writeByte(wakeWrite, byte)
    }

    static func writeByte(_ fd: Int32, _ byte: UInt8) {
        var value = byte
        _ = write(fd, &value, 1)
    }

    /// Sleeps until input, a wake-up, or `timeoutMilliseconds` (nil: forever); runs the handlers.
    /// Returns the number of ready descriptors (0 on timeout).
    @discardableResult
    public func runOnce(timeoutMilliseconds: Int64?) -> Int {
        var pollfds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        pollfds += watched.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }
        let timeout = timeoutMilliseconds.map { Int32(clamping: max(0, $0)) } ?? -1
        let ready = poll(&pollfds, nfds_t(pollfds.count), timeout)
        guard ready > 0 else { return 0 }
        if pollfds[0].revents != 0 {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64)
            while true {
                let n = read(wakeRead, &buffer, buffer.count)
                if n <= 0 { break }
                bytes += buffer[0..<n]
            }
            onWake?(bytes)
        }
        // Snapshot: handlers may watch/unwatch.
        let current = watched
        for entry in pollfds.dropFirst() where entry.revents != 0 {
            if let match = current.first(where: { $0.fd == entry.fd }), watched.contains(where: { $0.fd == entry.fd }) {
                match.handler(entry.revents)
            }
        }
        return Int(ready)
    }
}

/// Turns SIGTERM, SIGINT, SIGHUP and SIGUSR1 into bytes on an event loop's wake-up pipe, so signal
/// handling runs on the loop thread (never inside the async-signal context).
public enum SignalForwarding {
    nonisolated(unsafe) private static var targetFD: Int32 = -1

    /// Stop (TERM, INT), reload (HUP), requeue dead deliveries (USR1, from `geomon hooks retry`).
    public static let defaultSignals = [SIGTERM, SIGINT, SIGHUP, SIGUSR1]

    /// The byte written for a signal: 0x80 | signo (plain wake-ups use bytes < 0x80).
    public static func byte(for signal: Int32) -> UInt8 { UInt8(0x80 | (signal & 0x7F)) }

    public static func install(into loop: EventLoop, signals: [Int32]? = nil) {
        let signals = signals ?? defaultSignals
        targetFD = loop.wakeWrite
        for signo in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signo in
                let saved = errno
                var value = UInt8(0x80 | (signo & 0x7F))
                _ = write(SignalForwarding.targetFD, &value, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signo, &action, nil)
        }
    }

    /// Restores default dispositions (for a clean exit).
    public static func uninstall(signals: [Int32]? = nil) {
        let signals = signals ?? defaultSignals
        for signo in signals { signal(signo, SIG_DFL) }
    }
}
