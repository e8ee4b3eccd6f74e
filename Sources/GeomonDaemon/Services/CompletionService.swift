#if canImport(Glibc)
import Glibc
#endif

/// The one pipe through which work finished on other threads wakes the loop: hook processes,
/// heartbeat hooks and the receiver's switch programs each run on a thread of their own, and
/// their thread calls `wake` when one ended. The loop polls the pipe; when it is readable, every
/// registered collector takes what finished (the hooks record their attempts, the switch
/// service logs its outcome). Signals keep their own self-pipe: its bytes say which signal.
public final class CompletionService: EventSource {
    public let name = "completions"
    private let pipe: WakePipe
    private var collectors: [(DriverContext) throws -> Void] = []

    public init() throws {
        pipe = try WakePipe()
    }

    /// Wakes the loop (any thread).
    public var wake: @Sendable () -> Void { { [pipe] in pipe.wake() } }

    /// `collect` runs on the loop each time the pipe was woken.
    public func register(_ collect: @escaping (DriverContext) throws -> Void) {
        collectors.append(collect)
    }

    public var pollRequest: PollRequest? { PollRequest(fd: pipe.readFD, events: Int16(POLLIN)) }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        _ = pipe.drain()
        for collect in collectors { try collect(driver) }
    }
}
