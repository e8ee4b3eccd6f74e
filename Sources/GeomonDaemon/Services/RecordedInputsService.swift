public import GeomonCore
public import GeomonEvaluation

/// `geomon replay`'s inputs besides the fixes: what a motion source would have said over the
/// recording (`--motion`, `--activity derive`: `MotionSignal`, `ActivitySignal`; or an
/// `--activity FILE`) and the power supply's readings (`--power-supply FILE`), handed to the
/// driver at their times on the virtual clock (at the same instant: motion, then activity,
/// then the supply).
public final class RecordedInputsService: EventSource {
    public let name = "recorded-inputs"
    private let inputs: [(time: UTCTime, input: DriverInput)]
    private var next = 0

    public init(changes: [MotionSignal.Change], activities: [ActivitySignal.Change] = [],
                supplies: [(time: UTCTime, reading: PowerSupplyReading)] = []) {
        let all = changes.map { (time: $0.time, input: DriverInput.motion($0.motion)) }
            + activities.map { (time: $0.time, input: DriverInput.activity($0.activity)) }
            + supplies.map { (time: $0.time, input: DriverInput.supply($0.reading)) }
        // A stable sort: the concatenation's order breaks ties.
        inputs = all.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    public var nextWake: Int64? {
        next < inputs.count ? inputs[next].time.millisecondsSince1970 * 1000 : nil
    }

    /// What was said before the recording starts is the state the run starts in: handed over
    /// at once, before the first fix (what is said at the first fix's instant comes after it,
    /// as the services' order has it).
    public func start(_ driver: DriverContext) throws {
        while next < inputs.count, inputs[next].time < driver.now {
            driver.emit(inputs[next].input)
            next += 1
        }
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        while next < inputs.count, inputs[next].time <= driver.now {
            driver.emit(inputs[next].input)
            next += 1
        }
    }
}
