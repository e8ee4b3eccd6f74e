public import GeomonCore
public import GeomonStore
public import GeomonHooks
import Foundation
import GeomonFormat

/// Runs a replay's hook deliveries on real processes while the replay proceeds.
///
/// Events are decided on the replay's virtual clock; hooks run on real time (timeouts,
/// retries' backoff). It starts due deliveries right after each commit (`committed()`); `drain()` then waits until every delivery is delivered or dead-lettered. At
/// creation, attempts a crash interrupted become due again (same event id), so a replay
/// resumed on the same database first delivers what was left from before.
public final class ReplayHookDelivery {
    public let queue: EventStore
    public let worker: DeliveryWorker
    private let log: (String) -> Void

    /// What a drain came to.
    public struct Summary: Sendable, Equatable {
        /// Attempts recorded in this run, by outcome.
        public var delivered = 0
        public var retried = 0
        public var deadLettered = 0
        /// Dead deliveries in the database at the end (from this run or earlier ones).
        public var deadInStore = 0
    }

    private var counts = Summary()
    private var announcedHeldBack = false

    /// - Parameters:
    ///   - probe: where `when:` conditions are read (`ConditionProbe.fromEnvironment()`).
    ///   - conditionRecheck: how often held-back deliveries recheck their conditions.
    ///   - log: one line per failed attempt or notice (the command writes it to stderr).
    public init(
        profile: Profile, store: EventStore, probe: ConditionProbe = ConditionProbe(),
        conditionRecheck: Duration = .seconds(1), home: String? = nil, log: @escaping (String) -> Void
    ) throws {
        queue = store
        var settings = DeliveryWorker.Settings(
            profileName: profile.name, profileDirectory: HookTargets.absoluteDirectory(profile.directory),
            retry: profile.hooks.retry, home: home)
        settings.conditionRecheck = conditionRecheck
        worker = DeliveryWorker(queue: queue, settings: settings, catalog: HookCatalog(settings: profile.hooks), probe: probe)
        self.log = log
        worker.onOutcome = { [unowned self] outcome in self.record(outcome) }
        try worker.recover()
    }

    /// Starts what is due now (at start: what a previous run left).
    public func poll() throws {
        try worker.poll(now: WallClock.now())
    }

    /// Waits `duration` (a paced replay between fixes) while delivering: finished hooks are
    /// recorded and due retries started as they come.
    public func pause(_ duration: Duration) throws {
        let end = ContinuousClock.now + duration
        while true {
            let now = WallClock.now()
            let wake = try worker.poll(now: now)
            let left = end - ContinuousClock.now
            if left <= .zero { return }
            var wait = left
            if let wake { wait = min(wait, max(.milliseconds(1), wake - now)) }
            worker.waitForActivity(timeout: wait)
        }
    }

    /// Events were committed: start what is due.
    public func committed() throws {
        try poll()
    }

    /// Runs deliveries until none is pending, retrying or running. Held-back deliveries
    /// (`when:` not met) keep it waiting, with one notice.
    @discardableResult
    public func drain() throws -> Summary {
        while true {
            let now = WallClock.now()
            let wake = try worker.poll(now: now)
            if worker.runningCount == 0, try queue.openCount() == 0 { break }
            if worker.heldBack > 0 && worker.runningCount == 0 && !announcedHeldBack {
                announcedHeldBack = true
                log("hooks: \(worker.heldBack) \(worker.heldBack == 1 ? "delivery waits" : "deliveries wait") for their conditions (network/external power)")
            }
            var wait: Duration = .seconds(1)
            if let wake { wait = min(wait, max(.milliseconds(1), wake - now)) }
            worker.waitForActivity(timeout: wait)
        }
        var summary = counts
        summary.deadInStore = try queue.deliveries(status: .dead).count
        return summary
    }

    private func record(_ outcome: DeliveryWorker.Outcome) {
        let hook = JSON.array(outcome.delivery.argv)
        let what = "hook \(hook) for \(outcome.delivery.event.kind.rawValue) \(outcome.delivery.eventID)"
        switch outcome.decision {
        case .delivered:
            counts.delivered += 1
        case .retry(let at):
            counts.retried += 1
            log("\(what): attempt \(outcome.attempt) failed (\(outcome.result.summary)); retry at \(at.rfc3339)")
        case .dead:
            counts.deadLettered += 1
            log("\(what): attempt \(outcome.attempt) failed (\(outcome.result.summary)); dead-lettered")
        }
    }
}

extension ConditionProbe {
    /// The probe with its roots from `GEOMON_PROCFS_ROOT` / `GEOMON_SYSFS_ROOT` when set (for
    /// tests that fake the routing table and power supplies), else `/proc` and `/sys`.
    public static func fromEnvironment(_ environment: [String: String]? = nil) -> ConditionProbe {
        let environment = environment ?? ProcessInfo.processInfo.environment
        return ConditionProbe(
            procRoot: environment["GEOMON_PROCFS_ROOT"].flatMap { $0.isEmpty ? nil : $0 } ?? "/proc",
            sysRoot: environment["GEOMON_SYSFS_ROOT"].flatMap { $0.isEmpty ? nil : $0 } ?? "/sys")
    }
}
