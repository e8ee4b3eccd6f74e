#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonStore
public import GeomonEvaluation

/// `geomon replay`'s source: the receiver model over a recording (and the coarse feed), on the
/// driver's virtual clock. Its next wake is the next fix the model (or the coarse feed, while
/// on) delivers; the recording's end (its last fix) is the end of the inputs.
public final class ReceiverModelService: EventSource, EffectSink {
    public let name = "receiver-model"
    public private(set) var receiver: ReplayReceiver
    public let end: UTCTime
    /// Told each fix before it is handed over (progress, counts).
    public var onFix: ((Fix) -> Void)?
    /// The recording ended (`.end` was handed over).
    public private(set) var finished = false
    private var nextTime: UTCTime?
    private var now: UTCTime
    /// With a shared reading: how often what is off catches up with the clock
    /// (`ReplayReceiver.catchUp`), so a long sleep does not leave the reading holding every fix
    /// the other consumers took meanwhile. Nil: never (nothing else reads the recording).
    public var catchUpEvery: Duration?
    private var catchUpAt: UTCTime?

    public init(receiver: ReplayReceiver, start: UTCTime, end: UTCTime) {
        self.receiver = receiver
        self.end = end
        now = start
        nextTime = nil
    }

    /// The next fix's time, or just after the end (to say that the inputs ended).
    public var nextWake: Int64? {
        guard !finished else { return nil }
        let wake = nextTime.flatMap { $0 <= end ? $0.millisecondsSince1970 * 1000 : nil } ?? end.millisecondsSince1970 * 1000 + 1
        guard let catchUpAt else { return wake }
        return min(wake, catchUpAt.millisecondsSince1970 * 1000)
    }

    /// The mode the machine starts in (the report's time per mode).
    public func startMode(_ name: String) {
        receiver.startMode(name)
    }

    public func start(_ driver: DriverContext) throws {
        now = driver.now
        nextTime = receiver.nextFixTime(now: now)
        catchUpAt = catchUpEvery.map { now + $0 }
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        now = driver.now
        if let due = catchUpAt, due <= now, let every = catchUpEvery {
            receiver.catchUp(to: now)
            catchUpAt = now + every
            if nextTime.map({ $0 > now }) ?? (now <= end) { return }
        }
        if let time = nextTime, time <= end {
            if time <= now, let fix = receiver.takeFix(at: time) {
                onFix?(fix)
                driver.emit(.fix(fix))
            }
            nextTime = receiver.nextFixTime(now: max(now, time))
            return
        }
        guard !finished else { return }
        finished = true
        receiver.finish(at: end)
        driver.emit(.end)
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        guard !finished else { return }
        receiver.observe(effect, now: driver.now)
        // A switch changes what comes next (a wake's first fix, nothing while off); a planned
        // wake-up does not.
        switch effect {
        case .power(.gnssOn), .power(.gnssOff), .power(.coarseOn), .power(.coarseOff):
            nextTime = receiver.nextFixTime(now: driver.now)
        default:
            break
        }
    }
}
