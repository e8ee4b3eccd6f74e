public import GeomonCore
public import GeomonEvaluation

/// `geomon replay --motion`: the motion sensor a recording implies (`MotionSignal`), handed to
/// the driver at its times on the virtual clock.
public final class MotionReplayService: EventSource {
    public let name = "motion-replay"
    public let changes: [MotionSignal.Change]
    private var next = 0

    public init(changes: [MotionSignal.Change]) {
        self.changes = changes
    }

    public var nextWake: Int64? {
        next < changes.count ? changes[next].time.millisecondsSince1970 * 1000 : nil
    }

    public func start(_ driver: DriverContext) throws {}

    public func process(revents: Int16, _ driver: DriverContext) throws {
        while next < changes.count, changes[next].time <= driver.now {
            driver.emit(.motion(changes[next].motion))
            next += 1
        }
    }
}
