public import GeomonCore

/// Where one (event, hook) delivery stands.
public enum DeliveryStatus: String, Hashable, Sendable, CaseIterable {
    case pending
    case running
    case retrying
    case delivered
    case dead
}

/// One delivery row: an event to hand to one hook.
public struct Delivery: Hashable, Sendable {
    public var id: Int64
    public var eventID: String
    /// `kind#index` into the profile's hook list, e.g. `enter#0`.
    public var hookKey: String
    public var argv: [String]
    /// The fence id, or "" for `location` events.
    public var fenceID: String
    /// The event's sequence number (event order).
    public var seq: Int64
    public var status: DeliveryStatus
    public var attempt: Int
    public var nextAttemptAt: UTCTime
    public var lastError: String?
    public var updatedAt: UTCTime
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

/// An event as stored, with its sequence number and profile.
public struct StoredEvent: Hashable, Sendable {
    public var seq: Int64
    public var profile: String
    public var event: GeoEvent
}
