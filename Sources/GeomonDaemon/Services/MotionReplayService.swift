public import GeomonCore
public import GeomonEvaluation

/// `geomon replay --motion` and `--activity derive`: what a motion source would have said over
/// the recording (`MotionSignal`, `ActivitySignal`), handed to the driver at its times on the
/// virtual clock (at the same instant, motion before activity).
public final class MotionReplayService: EventSource {
    public let name = "motion-replay"
    private let inputs: [(time: UTCTime, input: DriverInput)]
    private var next = 0

    public init(changes: [MotionSignal.Change], activities: [ActivitySignal.Change] = []) {
        let all = changes.map { (time: $0.time, input: DriverInput.motion($0.motion)) }
            + activities.map { (time: $0.time, input: DriverInput.activity($0.activity)) }
        // A stable sort: the concatenation's order breaks ties.
        inputs = all.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    public var nextWake: Int64? {
        next < inputs.count ? inputs[next].time.millisecondsSince1970 * 1000 : nil
    }

    public func start(_ driver: DriverContext) throws {}

    public func process(revents: Int16, _ driver: DriverContext) throws {
        while next < inputs.count, inputs[next].time <= driver.now {
            driver.emit(inputs[next].input)
            next += 1
        }
    }
}
