public import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// The kernel's clocks, read in one place (the core never reads a clock; the shell and the
/// adapters read these).

/// `CLOCK_MONOTONIC`: unaffected by clock steps; the timers' clock.
public enum Monotonic {
    /// Microseconds since an arbitrary start.
    public static func microseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
    }
}

/// `CLOCK_REALTIME`: the wall clock, for the times written down.
public enum WallClock {
    public static func now() -> UTCTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UTCTime(millisecondsSince1970: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}
