public import GeomonCore
public import GeomonEvaluation

/// `geomon replay`'s source: a virtual clock and the receiver model over a recording.
///
/// The clock jumps from input to input: the earliest of the next fix the receiver model (or
/// the coarse feed, while on) delivers and the machine's deadline; a fix at the same instant as
/// a deadline goes first. The run ends at the recording's last fix; nothing after it is decided.
public final class ReplaySource: MonitorSource {
    public private(set) var receiver: ReplayReceiver
    public let start: UTCTime
    public let end: UTCTime
    public private(set) var now: UTCTime
    /// Called before each fix is handed over (pacing with `--speed`, progress).
    public var beforeFix: ((Fix) throws -> Void)?
    private var stalled = 0
    private var finished = false

    /// - Parameter track: the recorded GNSS fixes, sorted by time (not empty).
    public init(receiver: ReplayReceiver, start: UTCTime, end: UTCTime) {
        self.receiver = receiver
        self.start = start
        self.end = end
        now = start
    }

    public func next(until deadline: UTCTime?) throws -> MonitorInput {
        guard !finished else { return .end }
        let fixTime = receiver.nextFixTime(now: now)
        if let deadline, fixTime.map({ deadline < $0 }) ?? true {
            guard deadline <= end else { return finish() }
            let before = now
            now = max(now, deadline)
            // A deadline that never moves on would loop forever.
            stalled = now == before ? stalled + 1 : 0
            if stalled > 3 { return finish() }
            return .deadline
        }
        guard let time = fixTime, time <= end else { return finish() }
        now = max(now, time)
        stalled = 0
        guard let fix = receiver.takeFix(at: time) else { return finish() }
        try beforeFix?(fix)
        return .fix(fix)
    }

    public func observe(_ effect: Monitor.Effect, now: UTCTime) {
        receiver.observe(effect, now: now)
    }

    private func finish() -> MonitorInput {
        if !finished {
            finished = true
            receiver.finish(at: end)
        }
        return .end
    }
}
