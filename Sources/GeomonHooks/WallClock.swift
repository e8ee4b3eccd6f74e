public import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// The real-time clock, as the shell reads it (the core never does).
public enum WallClock {
    public static func now() -> UTCTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UTCTime(millisecondsSince1970: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}
