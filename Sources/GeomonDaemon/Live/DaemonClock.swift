public import GeomonCore

/// The live daemon's notion of "now" (the machine's time base): the GNSS time of the last fix
/// advanced by the monotonic clock since it arrived, or the wall clock before any fix.
///
/// A receiver's time is the best clock on the device, and deciding on one time base keeps
/// deadlines (dwell, policy wake-ups) consistent with fix times even when the system clock is
/// off — or when gpsd serves a recorded log dated years ago (gpsfake in tests and the demo).
/// Every time geomon stores is on this one base: the receiver switches a run records on the
/// system clock before its first fix move onto it when that fix comes (`Journal.timeBaseMoved`).
/// Each fix the machine takes re-anchors the clock at the fix's own time, so a fix is decided
/// at its time as replay decides it; the clock steps back for that by at most
/// `maxStepBack` (the delivery latency, an epoch waiting for its accuracy), never further.
public struct DaemonClock: Sendable {
    private var anchor: (time: UTCTime, monotonicMicroseconds: Int64)?
    public let host: any HostClock

    public init(host: any HostClock) {
        self.host = host
    }

    public var now: UTCTime { time(atMonotonic: host.monotonicMicroseconds) }

    /// The machine time at a monotonic instant.
    public func time(atMonotonic micros: Int64) -> UTCTime {
        guard let anchor else { return host.wall + .microseconds(micros - host.monotonicMicroseconds) }
        return anchor.time + .microseconds(micros - anchor.monotonicMicroseconds)
    }

    /// The monotonic instant at which the machine time reaches `time`.
    public func monotonic(at time: UTCTime) -> Int64 {
        let now = host.monotonicMicroseconds
        return now + (time.millisecondsSince1970 - self.time(atMonotonic: now).millisecondsSince1970) * 1000
    }

    /// How far back a fix's time may move the clock (its delivery latency).
    public static let maxStepBack: Duration = .seconds(2)
    /// How far ahead of the anchored clock a fix may be dated: a fix arrives within a second or
    /// two of its time, and the clock drifts from the receiver's by well under a second between
    /// fixes. Further is a bad date (a receiver's glitch, a coarse source writing local time as
    /// UTC) — unless `aheadRun` fixes in a row say so with the same offset (within
    /// `maxStepBack` of each other): then the clock was behind (a system suspend, which the
    /// monotonic clock does not count), and it moves on.
    public static let maxStepAhead: Duration = .seconds(60)
    public static let aheadRun = 3
    /// The offsets of the fixes in a row dated beyond `maxStepAhead`.
    private var aheadOffsets: [Duration] = []

    /// Whether a fix dated `time` may be taken (and the clock anchor on it): always before the
    /// first anchor; after it, not when dated beyond `maxStepAhead` of the clock, unless the
    /// `aheadRun`-th such fix in a row with the same offset.
    public mutating func admits(_ time: UTCTime) -> Bool {
        guard anchor != nil else { return true }
        let offset = time - now
        guard offset > Self.maxStepAhead else {
            aheadOffsets = []
            return true
        }
        if let last = aheadOffsets.last, offset - last > Self.maxStepBack || last - offset > Self.maxStepBack { aheadOffsets = [] }
        aheadOffsets.append(offset)
        guard aheadOffsets.count >= Self.aheadRun else { return false }
        aheadOffsets = []
        return true
    }

    /// The time to take a coarse fix dated `time` at: its own, unless dated beyond
    /// `maxStepAhead` of the clock (the system clock before the first anchor). A coarse
    /// source's date is when it located the device, never after it reported it: one far ahead
    /// is a bad date (a command writing local time as UTC, a system clock set wrong while the
    /// receiver's is right), which would move the time base there and leave every rightly
    /// dated fix after it older than the last one taken. It is taken at the clock's time.
    public func coarseTime(_ time: UTCTime) -> UTCTime {
        let now = self.now
        return time - now > Self.maxStepAhead ? now : time
    }

    /// Re-anchors on a fix that just arrived: at its time, unless that is more than
    /// `maxStepBack` before the clock (then the clock keeps going). Returns how far the first
    /// anchoring moved the time base off the system clock, when by more than `maxStepBack`
    /// (what was recorded before it is on the other base).
    @discardableResult
    public mutating func fixArrived(_ time: UTCTime) -> Duration? {
        let current = now
        let first = anchor == nil
        let anchored = first || time >= current - Self.maxStepBack ? time : current
        anchor = (anchored, host.monotonicMicroseconds)
        let shift = Duration.milliseconds(anchored.millisecondsSince1970 - current.millisecondsSince1970)
        return first && (shift > Self.maxStepBack || shift < .zero - Self.maxStepBack) ? shift : nil
    }
}
