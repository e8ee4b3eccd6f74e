#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore

/// The host's clocks, injected into the live daemon: a monotonic one for timers and a wall
/// clock for the times it writes. `SystemHostClock` reads the kernel's; tests drive a
/// `ManualClock` by hand, in microseconds, so no test sleeps through a backoff.
public protocol HostClock: AnyObject, Sendable {
    /// Monotonic microseconds (unaffected by clock steps).
    var monotonicMicroseconds: Int64 { get }
    /// Wall-clock UTC time.
    var wall: UTCTime { get }
    /// True when the clock only moves when a test advances it: the loop then never blocks.
    var isManual: Bool { get }
}

/// The kernel's `CLOCK_MONOTONIC` and `CLOCK_REALTIME`.
public final class SystemHostClock: HostClock {
    public init() {}

    public var monotonicMicroseconds: Int64 { Self.monotonicMicroseconds() }
    public var wall: UTCTime { Self.wall() }
    public var isManual: Bool { false }

    public static func monotonicMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    public static func wall() -> UTCTime {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UTCTime(millisecondsSince1970: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
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
    public var isManual: Bool { true }

    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        lock.withLock { micros += seconds * 1_000_000 + attoseconds / 1_000_000_000_000 }
    }
}
