public import GeomonCore

/// An event as stored, with its sequence number and profile.
public struct StoredEvent: Hashable, Sendable {
    public var seq: Int64
    public var profile: String
    public var event: GeoEvent

    public init(seq: Int64, profile: String, event: GeoEvent) {
        self.seq = seq
        self.profile = profile
        self.event = event
    }
}
