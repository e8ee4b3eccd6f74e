public import GeomonCore

/// Hook delivery's decisions as a pure state machine: which due deliveries start (at most
/// `maxConcurrent`, one at a time per hook and fence, held back while their conditions are not
/// met), what a finished attempt comes to (delivered, a retry at its backoff, dead), and when
/// to look again. `DeliveryWorker` performs its actions on the store and with `HookRunner`.
///
/// The retry jitter is drawn from the delivery itself (its event id and attempt), so the same
/// failure waits the same time in every run and every replay.
public struct DeliveryMachine: Sendable {
    public enum Action: Hashable, Sendable {
        case markRunning(id: Int64, attempt: Int)
        case start(Delivery, attempt: Int)
        case markDelivered(id: Int64)
        case markRetry(id: Int64, at: UTCTime, error: String)
        case markDead(id: Int64, error: String)
        case markInterrupted(id: Int64, attempt: Int, attempts: Int, note: String)
    }

    public struct Settings: Hashable, Sendable {
        public var maxConcurrent: Int
        public var retry: RetrySettings
        public var conditionRecheck: Duration
        public init(maxConcurrent: Int = 4, retry: RetrySettings = RetrySettings(), conditionRecheck: Duration = .seconds(30)) {
            self.maxConcurrent = maxConcurrent
            self.retry = retry
            self.conditionRecheck = conditionRecheck
        }
    }

    public let settings: Settings
    /// Keys with an attempt running.
    public private(set) var running: Set<SerialKey> = []
    /// Retries known to be due later (their times, for the next wake).
    private var retryTimes: Set<Int64> = []
    /// Heads held back by their conditions at the last selection.
    public private(set) var heldBack = 0

    public init(settings: Settings) {
        self.settings = settings
    }

    /// A retry time the store holds (at start-up, from the rows already retrying).
    public mutating func knowRetry(at time: UTCTime) {
        retryTimes.insert(time.millisecondsSince1970)
    }

    /// Which of the `due` rows start now; `isReady` says whether a row's conditions hold.
    public mutating func select(due: [Delivery], isReady: (Delivery) -> Bool) -> [Action] {
        let capacity = max(0, settings.maxConcurrent - running.count)
        let selection = DeliveryScheduler.select(due: due, running: running, capacity: capacity, isReady: isReady)
        heldBack = selection.heldBack.count
        var actions: [Action] = []
        for delivery in selection.start {
            let attempt = delivery.attempt + 1
            running.insert(delivery.serialKey)
            actions += [.markRunning(id: delivery.id, attempt: attempt), .start(delivery, attempt: attempt)]
        }
        return actions
    }

    /// Attempt `attempt` of `delivery`, cut short by geomon stopping (`HookResult.interrupted`):
    /// no longer running here, and due again in the store with the attempt not counted, so the
    /// next start runs it again under the same number; the same attempt cut short again counts
    /// (`markInterrupted`: a hook that outlasts every stop is not run without end). A crash,
    /// which records nothing, counts it (`DeliveryQueue.recoverInterrupted(attempts:)`).
    public mutating func interrupted(_ delivery: Delivery, attempt: Int) -> Action {
        running.remove(delivery.serialKey)
        return .markInterrupted(id: delivery.id, attempt: attempt, attempts: settings.retry.attempts,
                                note: "attempt \(attempt)/\(settings.retry.attempts): interrupted by a stop")
    }

    /// A selected attempt that did not start (the store could not mark it running).
    public mutating func abandon(_ delivery: Delivery) {
        running.remove(delivery.serialKey)
    }

    /// Attempt `attempt` of `delivery` ended with `result` at `now`: its outcome, as the store
    /// records it.
    public mutating func finished(_ delivery: Delivery, attempt: Int, result: HookResult, now: UTCTime) -> (action: Action, decision: DeliveryWorker.Decision) {
        running.remove(delivery.serialKey)
        if result.succeeded { return (.markDelivered(id: delivery.id), .delivered) }
        let error = "attempt \(attempt)/\(settings.retry.attempts): \(result.summary)"
        switch RetryPolicy.decide(afterAttempt: attempt, settings: settings.retry, now: now, jitterUnit: Self.jitter(delivery.eventID, attempt)) {
        case let .retry(at, _):
            retryTimes.insert(at.millisecondsSince1970)
            return (.markRetry(id: delivery.id, at: at, error: error), .retry(at: at))
        case .deadLetter:
            return (.markDead(id: delivery.id, error: error), .dead)
        }
    }

    /// When to look again at the latest (nil: only when a hook finishes or events come): the
    /// next known retry, and while heads are held back, the conditions' recheck.
    public mutating func nextWake(now: UTCTime) -> UTCTime? {
        retryTimes = retryTimes.filter { $0 > now.millisecondsSince1970 }
        var wake = retryTimes.min().map { UTCTime(millisecondsSince1970: $0) }
        if heldBack > 0 {
            let recheck = now + settings.conditionRecheck
            wake = wake.map { min($0, recheck) } ?? recheck
        }
        return wake
    }

    /// The jitter of one attempt's backoff, in [0, 1): from the event id and the attempt.
    static func jitter(_ eventID: String, _ attempt: Int) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in eventID.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        var generator = SplitMix64(seed: hash ^ UInt64(attempt))
        return generator.nextUnit()
    }
}
