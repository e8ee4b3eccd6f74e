#if canImport(Glibc)
public import Glibc
#endif
public import GeomonCore
import GeomonSystem

/// The host's clocks, injected into the live daemon: a monotonic one for timers and a wall
/// clock for the times it writes. `SystemHostClock` reads the kernel's; tests drive a
/// `ManualClock` by hand, in microseconds, so no test sleeps through a backoff.
public protocol HostClock: AnyObject, Sendable {
    /// Monotonic microseconds (unaffected by clock steps).
    var monotonicMicroseconds: Int64 { get }
    /// Wall-clock UTC time.
    var wall: UTCTime { get }
    /// Waits for `polls` at most `timeoutMicroseconds` (nil: until one is ready). A clock that
    /// moves only when a test advances it never blocks: it answers `wouldBlock` instead.
    func poll(_ polls: inout [pollfd], timeoutMicroseconds: Int64?) -> PollResult
}

/// What `HostClock.poll` came to.
public enum PollResult: Equatable, Sendable {
    case ready
    case timedOut
    /// The wait would block on a clock only a test moves.
    case wouldBlock
}

/// The kernel's `CLOCK_MONOTONIC` and `CLOCK_REALTIME`.
public final class SystemHostClock: HostClock {
    public init() {}

    public var monotonicMicroseconds: Int64 { Self.monotonicMicroseconds() }
    public var wall: UTCTime { Self.wall() }

    public func poll(_ polls: inout [pollfd], timeoutMicroseconds: Int64?) -> PollResult {
        // Rounded up to whole milliseconds: waking a little late is harmless, early is a spin.
        let timeout = timeoutMicroseconds.map { Int32(clamping: (max(0, $0) + 999) / 1000) } ?? -1
        while true {
            let ready = Glibc.poll(&polls, nfds_t(polls.count), timeout)
            if ready < 0, errno == EINTR { continue }
            return ready > 0 ? .ready : .timedOut
        }
    }

    public static func monotonicMicroseconds() -> Int64 {
        Monotonic.microseconds()
    }

    public static func wall() -> UTCTime {
        WallClock.now()
    }
}

/// A clock that moves only when told to (`advance(by:)`), for driving the live daemon's timers
/// in tests without sleeping. Wall and monotonic time move together.
public final class ManualClock: HostClock, @unchecked Sendable {
    private let lock = Mutex()
    private var micros: Int64
    private let wallStart: UTCTime

    public init(wall: UTCTime = UTCTime(millisecondsSince1970: 1_800_000_000_000), monotonicMicroseconds: Int64 = 1_000_000) {
        wallStart = wall
        micros = monotonicMicroseconds
        startMicros = monotonicMicroseconds
    }

    private let startMicros: Int64

    public var monotonicMicroseconds: Int64 { lock.withLock { micros } }
    public var wall: UTCTime {
        lock.withLock { wallStart + .microseconds(micros - startMicros) }
    }

    /// Never blocks: what is ready now, else `timedOut` when the wait was for no time, else
    /// `wouldBlock` (the test advances the clock).
    public func poll(_ polls: inout [pollfd], timeoutMicroseconds: Int64?) -> PollResult {
        if !polls.isEmpty, Glibc.poll(&polls, nfds_t(polls.count), 0) > 0 { return .ready }
        return timeoutMicroseconds == 0 ? .timedOut : .wouldBlock
    }

    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        lock.withLock { micros += seconds * 1_000_000 + attoseconds / 1_000_000_000_000 }
    }
}
