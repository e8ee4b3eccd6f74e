#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore

/// The shell's real clocks. The core never reads these; the daemon passes `now` in.
public enum SystemClock {
    /// Wall-clock UTC time.
    public static func now() -> UTCTime {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UTCTime(millisecondsSince1970: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }

    /// Monotonic milliseconds (for timeouts and sleeping; unaffected by clock steps).
    public static func monotonicMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
