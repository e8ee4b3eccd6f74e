#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonStore

/// systemd's notify protocol as a service: `READY=1` once every service before it started (it
/// is started last), `STATUS=` with the fence count and the receiver, `RELOADING=1`/`READY=1`
/// around a reload, `STOPPING=1` first when stopping, and the watchdog ping at half the
/// interval systemd asked for — the only periodic timer of an idle daemon.
public final class SystemdService: EventSource {
    public let name = "systemd"
    private let notifier: SystemdNotifier
    private var watchdogAt: Int64?

    public init(environment: [String: String]) {
        notifier = SystemdNotifier(environment: environment)
    }

    public var nextWake: Int64? { watchdogAt }

    public func start(_ driver: DriverContext) throws {
        notifier.ready(status: Self.statusLine(driver))
        scheduleWatchdog(driver)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        notifier.watchdog()
        scheduleWatchdog(driver)
    }

    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        notifier.reloading()
        notifier.ready(status: Self.statusLine(driver))
    }

    public func stop(_ driver: DriverContext) {
        notifier.stopping()
    }

    private func scheduleWatchdog(_ driver: DriverContext) {
        watchdogAt = notifier.watchdogIntervalMilliseconds.map { driver.monotonic + $0 * 1000 }
    }

    static func statusLine(_ driver: DriverContext) -> String {
        "\(driver.profile.fences.count) fences, receiver \(driver.status.receiverOn ? "on" : "off") (\(driver.status.receiverReason))"
    }
}

/// Stops the driver after a set time (`geomon run --exit-after`, tests and demos).
public final class StopTimerService: EventSource {
    public let name = "exit-after"
    private let after: Duration
    private var at: Int64?
    private let log: Log

    public init(after: Duration, log: Log) {
        self.after = after
        self.log = log
    }

    public var nextWake: Int64? { at }

    public func start(_ driver: DriverContext) throws {
        at = driver.monotonic(after: after)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        at = nil
        log.notice("exit-after reached")
        driver.emit(.stop("exit-after"))
    }
}
