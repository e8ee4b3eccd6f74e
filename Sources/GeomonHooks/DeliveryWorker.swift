public import GeomonCore
public import GeomonSystem

/// Pulls due deliveries from a `DeliveryQueue`, runs them with a `HookRunner` (each on its own
/// thread, up to `maxConcurrent` at once, strictly one at a time per hook and fence), and
/// records every outcome: exit 0 → delivered; anything else → retry with backoff, or dead.
///
/// Owned by one thread (the daemon loop): call `poll(now:)` after committing new events, when a
/// hook finished (`onActivity` fires, or `waitForActivity`) and at the returned wake time. The
/// queue is only touched inside `poll`, on the owner's thread.
public final class DeliveryWorker {
    public struct Settings: Sendable {
        public var maxConcurrent: Int = 4
        public var retry: RetrySettings = RetrySettings()
        /// How often held-back deliveries recheck their conditions.
        public var conditionRecheck: Duration = .seconds(30)
        public var profileName: String
        /// Working directory of hooks and base of relative `exec[0]`.
        public var profileDirectory: String
        public var home: String?
        /// Timeout for a delivery whose command the profile no longer lists.
        public var defaultTimeout: Duration = .seconds(30)
        /// How many due rows one poll reads.
        public var batchLimit: Int = 256

        public init(profileName: String, profileDirectory: String, retry: RetrySettings = RetrySettings(), maxConcurrent: Int = 4, home: String? = nil) {
            self.profileName = profileName
            self.profileDirectory = profileDirectory
            self.retry = retry
            self.maxConcurrent = maxConcurrent
            self.home = home
        }
    }

    /// What one recorded attempt came to.
    public struct Outcome: Sendable {
        public var delivery: Delivery
        public var attempt: Int
        public var result: HookResult
        public var decision: Decision

        public init(delivery: Delivery, attempt: Int, result: HookResult, decision: Decision) {
            self.delivery = delivery
            self.attempt = attempt
            self.result = result
            self.decision = decision
        }
    }

    public enum Decision: Sendable, Equatable {
        case delivered
        case retry(at: UTCTime)
        case dead
        /// Cut short by geomon stopping: left `running`, it runs again after the restart.
        case interrupted
    }

    private struct Finished: Sendable {
        var delivery: Delivery
        var attempt: Int
        var result: HookResult
    }

    public let settings: Settings
    private let queue: any DeliveryQueue
    private let runner: HookRunner
    private let catalog: HookCatalog
    private let probe: ConditionProbe
    /// The decisions (which start, what an attempt comes to, when to look again).
    private var machine: DeliveryMachine
    private let inbox: CompletionInbox<Finished>

    /// Called on the owner's thread for each recorded attempt (for logging).
    public var onOutcome: ((Outcome) -> Void)?

    /// - Parameter onActivity: called from a hook thread when a hook finished; wake the loop.
    public init(
        queue: any DeliveryQueue, settings: Settings, catalog: HookCatalog, runner: HookRunner = HookRunner(),
        probe: ConditionProbe = ConditionProbe(), onActivity: (@Sendable () -> Void)? = nil
    ) {
        self.queue = queue
        self.settings = settings
        self.catalog = catalog
        self.runner = runner
        self.probe = probe
        machine = DeliveryMachine(settings: .init(maxConcurrent: settings.maxConcurrent, retry: settings.retry,
                                                  conditionRecheck: settings.conditionRecheck))
        self.inbox = CompletionInbox(onActivity: onActivity)
    }

    /// Hooks started and not yet recorded.
    public var runningCount: Int { machine.running.count }

    /// Deliveries whose conditions held them back at the last poll.
    public var heldBack: Int { machine.heldBack }

    /// At start-up: attempts interrupted by a crash run again (same event id), and known retry
    /// times are remembered for `poll`'s wake time.
    public func recover() throws {
        try queue.recoverInterrupted(attempts: settings.retry.attempts)
        try learnRetries()
    }

    /// Remembers the retry times the store holds, for `poll`'s wake time (a worker made for a
    /// reloaded profile, while its predecessor's hooks may still run).
    public func learnRetries() throws {
        for delivery in try queue.deliveries(status: .retrying) {
            if let at = delivery.nextAttemptAt { machine.knowRetry(at: at) }
        }
    }

    /// Records finished attempts, starts what is due, and returns when to poll again at the
    /// latest (nil: only when a hook finishes or new events are committed).
    @discardableResult
    public func poll(now: UTCTime) throws -> UTCTime? {
        try recordFinished(now: now)
        var conditionCache: [HookConditions: Bool] = [:]
        func isReady(_ delivery: Delivery) -> Bool {
            let conditions = catalog.spec(forKey: delivery.hookKey, kind: delivery.event.kind)?.when ?? HookConditions()
            if !conditions.network && !conditions.externalPower { return true }
            if let known = conditionCache[conditions] { return known }
            let ok = probe.satisfied(conditions)
            conditionCache[conditions] = ok
            return ok
        }
        var limit = max(settings.batchLimit, settings.maxConcurrent)
        var actions: [DeliveryMachine.Action] = []
        while true {
            let due = try queue.dueDeliveries(now: now, limit: limit)
            actions += machine.select(due: due, isReady: isReady)
            // A full page whose heads their conditions held back (a hook waiting for the
            // network across many fences) may hide ready ones behind it: a larger page, while
            // there is room to start one.
            guard due.count == limit, machine.heldBack > 0, machine.running.count < settings.maxConcurrent, limit < 1 << 20 else { break }
            limit *= 2
        }
        for (index, action) in actions.enumerated() {
            do {
                try perform(action)
            } catch {
                // The store failed before these attempts began: they are not running, and stay
                // due for the next poll.
                for case let .start(delivery, _) in actions[index...] { machine.abandon(delivery) }
                throw error
            }
        }
        return machine.nextWake(now: now)
    }

    /// Records finished attempts and starts nothing (a worker retiring after a reload, whose
    /// successor starts what is due): the next retry it scheduled.
    public func drain(now: UTCTime) throws -> UTCTime? {
        try recordFinished(now: now)
        return machine.nextWake(now: now)
    }

    private func recordFinished(now: UTCTime) throws {
        let finished = inbox.takeAll()
        for (index, item) in finished.enumerated() {
            do {
                try record(item, now: now)
            } catch {
                // Keep what was not recorded (the store failed): the next poll tries again.
                inbox.putBack(Array(finished[index...]))
                throw error
            }
        }
    }

    /// Ends the hooks running now (SIGTERM to each group, SIGKILL after the runner's grace):
    /// their attempts are interrupted, not failed: once recorded (`drain`), due again in the
    /// store with the attempt not counted, they run again after the restart under the same
    /// number (a hook that exits 0 all the same is delivered).
    public func stopHooks() {
        runner.stopAll()
    }

    /// Blocks until a running hook finishes or `timeout` passes.
    public func waitForActivity(timeout: Duration) {
        inbox.wait(timeout: timeout)
    }

    /// Polls until nothing is pending, retrying or running (true), or `timeout` passed (false).
    /// For `hooks fire` and tests.
    public func runUntilSettled(timeout: Duration, clock: () -> UTCTime = WallClock.now) throws -> Bool {
        let end = ContinuousClock.now + timeout
        while true {
            let now = clock()
            let wake = try poll(now: now)
            if machine.running.isEmpty, try openCount() == 0 { return true }
            let left = end - ContinuousClock.now
            if left <= .zero { return false }
            var wait = left
            if let wake { wait = min(wait, max(.milliseconds(1), wake - now)) }
            if machine.running.isEmpty && wake == nil { wait = min(wait, .milliseconds(50)) }
            inbox.wait(timeout: wait)
        }
    }

    private func openCount() throws -> Int {
        try queue.deliveries(status: .pending).count + queue.deliveries(status: .retrying).count
            + queue.deliveries(status: .running).count
    }

    private func perform(_ action: DeliveryMachine.Action) throws {
        switch action {
        case let .markRunning(id, attempt): try queue.markRunning(id: id, attempt: attempt)
        case let .start(delivery, attempt): start(delivery, attempt: attempt)
        case let .markDelivered(id): try queue.markDelivered(id: id)
        case let .markRetry(id, at, error): try queue.markRetry(id: id, nextAttemptAt: at, error: error)
        case let .markDead(id, error): try queue.markDead(id: id, error: error)
        case let .markInterrupted(id, attempt, attempts, note): try queue.markInterrupted(id: id, attempt: attempt, attempts: attempts, note: note)
        }
    }

    private func start(_ delivery: Delivery, attempt: Int) {
        let spec = catalog.spec(forKey: delivery.hookKey, kind: delivery.event.kind)
        let invocation = HookEnvironment.invocation(
            argv: delivery.argv, timeout: spec?.timeout ?? settings.defaultTimeout, event: delivery.event, profileName: settings.profileName,
            profileDirectory: settings.profileDirectory, attempt: attempt, home: settings.home, extra: spec?.environment ?? [:]
        )
        let inbox = self.inbox
        runner.start(invocation) { result in
            inbox.post(Finished(delivery: delivery, attempt: attempt, result: result))
        }
    }

    private func record(_ finished: Finished, now: UTCTime) throws {
        if finished.result.interrupted {
            try perform(machine.interrupted(finished.delivery, attempt: finished.attempt))
            onOutcome?(Outcome(delivery: finished.delivery, attempt: finished.attempt, result: finished.result, decision: .interrupted))
            return
        }
        let (action, decision) = machine.finished(finished.delivery, attempt: finished.attempt, result: finished.result, now: now)
        try perform(action)
        onOutcome?(Outcome(delivery: finished.delivery, attempt: finished.attempt, result: finished.result, decision: decision))
    }
}
