public import GeomonCore

/// The live daemon's notion of "now": the GNSS time of the last fix advanced by the monotonic
/// clock since it arrived, or the system clock before any fix.
///
/// A receiver's time is the best clock on the device, and deciding on one time base keeps
/// deadlines (dwell, policy wake-ups) consistent with fix times even when the system clock is
/// off — or when gpsd serves a recorded log dated years ago (gpsfake in tests and the demo).
public struct DaemonClock: Sendable {
    private var anchor: (fixTime: UTCTime, monotonicMs: Int64)?
    private let system: @Sendable () -> UTCTime
    private let monotonic: @Sendable () -> Int64

    public init(
        system: @escaping @Sendable () -> UTCTime = { SystemClock.now() },
        monotonic: @escaping @Sendable () -> Int64 = { SystemClock.monotonicMilliseconds() }
    ) {
        self.system = system
        self.monotonic = monotonic
    }

    public func now() -> UTCTime {
        guard let anchor else { return system() }
        return UTCTime(millisecondsSince1970: anchor.fixTime.millisecondsSince1970 + (monotonic() - anchor.monotonicMs))
    }

    /// Re-anchors on a fix that just arrived (never moves the clock backwards).
    public mutating func fixArrived(_ time: UTCTime) {
        let current = now()
        let fixTime = anchor == nil ? time : max(time, current)
        anchor = (fixTime, monotonic())
    }

    /// Milliseconds of monotonic time until `deadline` on this clock (≥ 0).
    public func milliseconds(until deadline: UTCTime) -> Int64 {
        max(0, deadline.millisecondsSince1970 - now().millisecondsSince1970)
    }
}
