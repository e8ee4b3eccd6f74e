#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
public import GeomonStore
public import GeomonHooks
import GeomonFormat
import FoundationEssentials

/// Hook deliveries from the store's outbox: due rows start as processes (each supervised on a
/// thread of its own), finished ones are recorded when the driver next runs this service (their
/// threads wake it through the loop's one completion pipe, `CompletionService`), retries wait
/// for their time.
///
/// Times are the driver's wall clock: the system's in a live run; in a replay the virtual time,
/// so a failed attempt's backoff passes in the recording's time, and a running hook holds the
/// virtual clock until it finished — hooks complete in the order a live run sees them complete
/// when each finishes before the next event comes.
public final class HookService: EventSource, EffectSink, ClockHolding, DeadLetters {
    public let name = "hooks"
    public let store: EventStore
    private var worker: DeliveryWorker
    /// Workers of an earlier profile, recording the hooks they started (after a reload).
    private var retiring: [DeliveryWorker] = []
    private let wake: @Sendable () -> Void
    private let makeWorker: (Profile, @escaping @Sendable () -> Void) -> DeliveryWorker
    private var wakeAt: Int64?
    private var heldBackNoticed = false
    /// The hooks of the profile running now (a reload compares the new ones with them).
    private var hooks: HookSettings
    /// Told each recorded attempt (logging; the replay's summary).
    public var onOutcome: ((DeliveryWorker.Outcome) -> Void)?
    /// Told once when deliveries wait for their `when:` conditions at the end of a replay.
    public var onHeldBack: ((Int) -> Void)?

    /// - Parameters:
    ///   - completions: the loop's wake when a hook finished.
    ///   - makeWorker: the worker for a profile, waking the loop with the closure given.
    public init(profile: Profile, store: EventStore, completions: CompletionService,
                makeWorker: @escaping (Profile, @escaping @Sendable () -> Void) -> DeliveryWorker) {
        self.store = store
        hooks = profile.hooks
        wake = completions.wake
        self.makeWorker = makeWorker
        worker = makeWorker(profile, wake)
        worker.onOutcome = { [unowned self] in self.onOutcome?($0) }
        completions.register { [unowned self] driver in try poll(driver) }
    }

    /// The one assembly of hook delivery `geomon run` and `geomon replay` share: the profile's
    /// hooks and retry rules, its directory as the hooks' working directory, `HOME` and the
    /// condition probe's roots from `environment`, 4 hooks at once, and a held-back delivery's
    /// `when:` conditions checked again every `conditionRecheck` of the driver's time (a
    /// replay: 1 s, since once its recording ended it waits for them in real time).
    public convenience init(profile: Profile, store: EventStore, completions: CompletionService, environment: [String: String],
                            conditionRecheck: Duration = .seconds(30)) {
        self.init(profile: profile, store: store, completions: completions) { profile, wake in
            var settings = DeliveryWorker.Settings(
                profileName: profile.name, profileDirectory: HookTargets.absoluteDirectory(profile.directory),
                retry: profile.hooks.retry, home: environment["HOME"])
            settings.conditionRecheck = conditionRecheck
            return DeliveryWorker(queue: store.deliveryQueue, settings: settings, catalog: HookCatalog(settings: profile.hooks),
                                  probe: .fromEnvironment(environment), onActivity: wake)
        }
    }

    /// Hooks running now.
    public var runningCount: Int { worker.runningCount + retiring.reduce(0) { $0 + $1.runningCount } }

    public var nextWake: Int64? { wakeAt }
    public var holdsClock: Bool { runningCount > 0 }

    /// Every delivery delivered or dead-lettered (held-back ones wait for their conditions).
    public var isSettled: Bool {
        runningCount == 0 && ((try? store.deliveryQueue.openCount()) ?? 1) == 0
    }

    public func start(_ driver: DriverContext) throws {
        try worker.recover()
        try poll(driver)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        try poll(driver)
    }

    public func committed(_ events: [StoredEvent], _ driver: DriverContext) throws {
        try poll(driver)
    }

    /// `geomon hooks retry` (SIGUSR1). The requeue is one more store write of the poll: a
    /// store that refuses it (locked by another writer past the busy timeout, a full disk) is
    /// logged and tried again with the poll's retry, as the other writes are, and stops nothing.
    public func requeueDead(_ driver: DriverContext) throws {
        requeueAsked = true
        try poll(driver)
    }

    /// `geomon hooks retry` asked for the dead deliveries again, and they are not yet requeued.
    private var requeueAsked = false

    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        // A command the edit replaced takes its queued deliveries along (its settings, its
        // place in each fence's order), rather than leaving them on a command no longer listed.
        for change in HookCatalog.replacements(from: hooks, to: profile.hooks) {
            let moved: Int
            do {
                moved = try store.deliveryQueue.rekey(from: change.from, to: change.to, argv: change.argv)
            } catch {
                driver.log.error("the deliveries of a changed hook command stay with the old one", ["hook.before": change.from, "error": "\(error)"])
                continue
            }
            if moved > 0 {
                driver.log.notice("hook command changed; its deliveries not yet made follow it",
                                  ["hook.before": change.from, "hook.after": change.to, "deliveries": "\(moved)"])
            }
        }
        hooks = profile.hooks
        // Hooks already running finish and are recorded by the worker that started them.
        if worker.runningCount > 0 { retiring.append(worker) }
        worker = makeWorker(profile, wake)
        worker.onOutcome = { [unowned self] in self.onOutcome?($0) }
        try worker.learnRetries()
        try poll(driver)
    }

    public func stop(_ driver: DriverContext) {
        // Running hooks get their time; then they are ended as their timeout would end them
        // (a hook left running would overlap its delivery run again after a restart). An
        // attempt cut short is interrupted, not failed: due again in the store and not
        // counted, it runs again after the restart under the same number
        // (`HookResult.interrupted`).
        // Nothing new starts meanwhile: what finishes is only recorded.
        let workers = retiring + [worker]
        func record(until end: Int64) {
            while runningCount > 0, SystemHostClock.monotonicMicroseconds() < end {
                worker.waitForActivity(timeout: .milliseconds(100))
                for each in workers { _ = try? each.drain(now: driver.wall) }
            }
        }
        record(until: SystemHostClock.monotonicMicroseconds() + 2_000_000)
        guard runningCount > 0 else { return }
        for each in workers { each.stopHooks() }
        record(until: SystemHostClock.monotonicMicroseconds() + 7_000_000)
        driver.updateStatus(\.hooksRunning, runningCount)
    }

    /// Waits (in real time, at most `timeout`) until running hooks finished, recording them.
    public func waitForHooks(timeout: Duration, _ driver: DriverContext) {
        let end = SystemHostClock.monotonicMicroseconds() + timeout.wholeMicroseconds
        while runningCount > 0, SystemHostClock.monotonicMicroseconds() < end {
            worker.waitForActivity(timeout: .milliseconds(20))
            try? poll(driver)
        }
    }

    /// Records what finished, starts what is due, and schedules the next retry.
    private func poll(_ driver: DriverContext) throws {
        do {
            if requeueAsked {
                let count = try store.deliveryQueue.requeueDead()
                requeueAsked = false
                driver.log.notice("dead deliveries requeued", ["count": "\(count)"])
            }
            // A retiring worker records the hooks it started; a retry it schedules is the
            // store's, started by the current worker, which learns it to wake for it.
            if !retiring.isEmpty {
                for old in retiring { _ = try old.drain(now: driver.wall) }
                retiring.removeAll { $0.runningCount == 0 }
                try worker.learnRetries()
            }
            wakeAt = try worker.poll(now: driver.wall).map { driver.monotonic(atWall: $0) }
        } catch {
            driver.log.error("hook delivery failed to update the store", ["error": "\(error)"])
            wakeAt = driver.monotonic(after: .seconds(5))
        }
        driver.updateStatus(\.hooksRunning, runningCount)
        if worker.heldBack > 0, runningCount == 0, !heldBackNoticed {
            heldBackNoticed = true
            onHeldBack?(worker.heldBack)
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
