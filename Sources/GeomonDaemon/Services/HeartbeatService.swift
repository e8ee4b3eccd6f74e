#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonStore
public import GeomonHooks

/// The `hooks.heartbeat` list, run every `heartbeat_every` with the daemon's status as JSON on
/// stdin; not durable (a failed beat is logged, the next one comes at its time).
public final class HeartbeatService: EventSource {
    public let name = "heartbeat"
    private var heartbeat: HeartbeatDriver
    private let wake: @Sendable () -> Void
    private let make: (Profile, @escaping @Sendable () -> Void) -> HeartbeatDriver
    private var wakeAt: Int64?

    /// - Parameter completions: the loop's wake when a beat finished.
    public init(profile: Profile, completions: CompletionService, make: @escaping (Profile, @escaping @Sendable () -> Void) -> HeartbeatDriver) {
        wake = completions.wake
        self.make = make
        heartbeat = make(profile, wake)
        completions.register { [unowned self] driver in poll(driver) }
    }

    /// Drivers replaced by a reload whose beats still run: their results are reported, and a
    /// hook busy in one is not started again until its beat ends.
    private var retiring: [HeartbeatDriver] = []

    public var runningCount: Int { ([heartbeat] + retiring).reduce(0) { $0 + $1.runningCount } }
    public var nextWake: Int64? { wakeAt }

    public func start(_ driver: DriverContext) throws { poll(driver) }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        poll(driver)
    }

    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        let previous = heartbeat
        heartbeat = make(profile, wake)
        heartbeat.continueSchedule(of: previous)
        if previous.runningCount > 0 { retiring.append(previous) }
        poll(driver)
    }

    /// Ends running beats (they are not durable; none outlives the daemon) and reports them.
    public func stop(_ driver: DriverContext) {
        let drivers = [heartbeat] + retiring
        guard runningCount > 0 else { return }
        for each in drivers { each.stopBeats() }
        // The runner's grace (SIGTERM, then SIGKILL 5 s later) and a second to reap.
        let end = SystemHostClock.monotonicMicroseconds() + 6_000_000
        while runningCount > 0, SystemHostClock.monotonicMicroseconds() < end {
            heartbeat.waitForActivity(timeout: .milliseconds(100))
            for each in drivers { each.drain() }
        }
    }

    /// Waits (in real time, at most `timeout`) until running beats finished (tests).
    public func waitForBeats(timeout: Duration, _ driver: DriverContext) {
        let end = SystemHostClock.monotonicMicroseconds() + timeout.wholeMicroseconds
        while heartbeat.runningCount > 0, SystemHostClock.monotonicMicroseconds() < end {
            heartbeat.waitForActivity(timeout: .milliseconds(20))
            poll(driver)
        }
    }

    private func poll(_ driver: DriverContext) {
        for each in retiring { each.drain() }
        retiring.removeAll { $0.runningCount == 0 }
        let elsewhere = retiring.reduce(into: Set<String>()) { $0.formUnion($1.busyKeys) }
        if let next = heartbeat.poll(now: driver.wall, busyElsewhere: elsewhere, status: { RuntimeStatusText.json(driver.status) }) {
            wakeAt = driver.monotonic(atWall: next)
        } else {
            wakeAt = nil
        }
    }
}
