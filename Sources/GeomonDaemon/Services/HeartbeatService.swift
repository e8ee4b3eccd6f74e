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

    public var runningCount: Int { heartbeat.runningCount }
    public var nextWake: Int64? { wakeAt }

    public func start(_ driver: DriverContext) throws { poll(driver) }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        poll(driver)
    }

    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        heartbeat = make(profile, wake)
        poll(driver)
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
        if let next = heartbeat.poll(now: driver.wall, status: { RuntimeStatusText.json(driver.status) }) {
            wakeAt = driver.monotonic(atWall: next)
        } else {
            wakeAt = nil
        }
    }
}
