#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT (stop), SIGHUP (reload) and SIGUSR1 (`geomon hooks retry`: run the dead
/// deliveries again) as driver inputs: the signal handlers write a byte to a pipe, this service
/// reads it on the driver's loop (never inside the async-signal context).
public final class SignalService: EventSource {
    public let name = "signals"
    private let pipe: WakePipe
    private let log: Log

    public init(log: Log) throws {
        pipe = try WakePipe()
        self.log = log
    }

    public var pollRequest: PollRequest? { PollRequest(fd: pipe.readFD, events: Int16(POLLIN)) }

    public func start(_ driver: DriverContext) throws {
        SignalForwarding.install(into: pipe.writeFD)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        for byte in pipe.drain() {
            switch byte {
            case SignalForwarding.byte(for: SIGTERM), SignalForwarding.byte(for: SIGINT):
                log.notice("stopping on signal")
                driver.emit(.stop("signal"))
            case SignalForwarding.byte(for: SIGHUP):
                driver.emit(.reload)
            case SignalForwarding.byte(for: SIGUSR1):
                driver.emit(.requeueDead)
            case SignalForwarding.byte(for: SIGUSR2):
                driver.emit(.publishNow)
            default:
                break
            }
        }
    }

    public func stop(_ driver: DriverContext) {
        SignalForwarding.uninstall()
    }
}

/// A non-blocking self-pipe: other threads and signal handlers write a byte to wake the loop,
/// the loop polls the read end.
public final class WakePipe: @unchecked Sendable {
    public let readFD: Int32
    public let writeFD: Int32

    public struct Failed: Error, CustomStringConvertible {
        public var errnoValue: Int32
        public var description: String { "pipe failed: \(String(cString: strerror(errnoValue)))" }
    }

    public init() throws {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { throw Failed(errnoValue: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Wakes the reader (any thread).
    public func wake(_ byte: UInt8 = 0) {
        var value = byte
        _ = write(writeFD, &value, 1)
    }

    /// The bytes written since the last drain.
    public func drain() -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let n = read(readFD, &buffer, buffer.count)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }
}

/// Turns SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGUSR2 into bytes on a pipe.
public enum SignalForwarding {
    nonisolated(unsafe) private static var targetFD: Int32 = -1

    /// Stop (TERM, INT), reload (HUP), requeue dead deliveries (USR1, from `geomon hooks
    /// retry`), publish now (USR2, from `geomon publish retry`).
    public static let defaultSignals = [SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2]

    /// The byte written for a signal: 0x80 | signo.
    public static func byte(for signal: Int32) -> UInt8 { UInt8(0x80 | (signal & 0x7F)) }

    public static func install(into fd: Int32, signals: [Int32]? = nil) {
        targetFD = fd
        for signo in signals ?? defaultSignals {
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
        for signo in signals ?? defaultSignals { signal(signo, SIG_DFL) }
    }
}
