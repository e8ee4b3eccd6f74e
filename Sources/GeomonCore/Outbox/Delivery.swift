/// Where a delivery stands.
public enum DeliveryStatus: String, Hashable, Sendable, CaseIterable {
    /// Waiting for its first attempt (or requeued).
    case pending
    /// An attempt has been started and not recorded yet (after a crash: interrupted).
    case running
    /// A previous attempt failed; the next one is due at `nextAttemptAt`.
    case retrying
    /// The hook exited 0. Terminal.
    case delivered
    /// Every attempt failed; kept for `geomon hooks dead` / `retry`. Terminal until requeued.
    case dead
}

/// One (event, hook) pair to deliver: a row the store writes in the same transaction as the event.
public struct Delivery: Hashable, Sendable {
    /// Store row id; increasing in event order (deliveries are inserted with their event).
    public var id: Int64
    /// The event, as stored.
    public var event: GeoEvent
    /// The hook's identity (`HookCatalog.key(for:)`): deliveries to one key for one fence are serial.
    public var hookKey: String
    /// The command as it was when the event was decided.
    public var argv: [String]
    public var status: DeliveryStatus
    /// Attempts started so far (0 before the first).
    public var attempt: Int
    /// When the next attempt may start; nil means now.
    public var nextAttemptAt: UTCTime?
    /// Summary of the last failed attempt.
    public var lastError: String?

    public var eventID: String { event.id }
    public var fenceID: String? { event.fenceID }
    /// The ordering key: one hook, one fence.
    public var serialKey: SerialKey { SerialKey(hookKey: hookKey, fenceID: event.fenceID) }

    public init(
        id: Int64, event: GeoEvent, hookKey: String, argv: [String], status: DeliveryStatus = .pending,
        attempt: Int = 0, nextAttemptAt: UTCTime? = nil, lastError: String? = nil
    ) {
        self.id = id
        self.event = event
        self.hookKey = hookKey
        self.argv = argv
        self.status = status
        self.attempt = attempt
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
    }
}

/// Deliveries sharing a key run strictly one after another, in event order.
public struct SerialKey: Hashable, Sendable {
    public var hookKey: String
    /// nil for events without a fence (`location`): those are serial per hook.
    public var fenceID: String?

    public init(hookKey: String, fenceID: String?) {
        self.hookKey = hookKey
        self.fenceID = fenceID
    }
}

/// A hook an event must be delivered to: written as a delivery row with the event.
public struct DeliveryTarget: Hashable, Sendable {
    public var hookKey: String
    public var argv: [String]
    public init(hookKey: String, argv: [String]) {
        self.hookKey = hookKey
        self.argv = argv
    }
}
