/// Where the profile publishes (`publish:`): today one MQTT broker, in the OwnTracks format
/// (docs/publish.md).
public struct PublishSettings: Sendable {
    public var mqtt: MQTTSettings?
    public init() {}
}

/// `publish.mqtt`: the broker, the credentials, the topic and what is published.
public struct MQTTSettings: Hashable, Sendable {
    /// Which fixes become `location` messages.
    public enum Locations: String, Hashable, Sendable, CaseIterable {
        /// Only events (transitions, dwells): no location stream.
        case none
        /// A location with every event and every significant change (`significant_change:`).
        case significant
        /// Every fix the engine took.
        case all
    }

    /// The MQTT version spoken (`protocol`).
    public enum ProtocolVersion: String, Hashable, Sendable, CaseIterable {
        /// MQTT 5: the broker says why it refuses a message (PUBACK reason codes).
        case v5 = "5"
        /// MQTT 3.1.1, for brokers without MQTT 5: a refused message looks acknowledged.
        case v311 = "3.1.1"
    }

    public struct TLS: Sendable, Hashable {
        /// CA bundle the broker's certificate must chain to; nil: the system's.
        public var caFile: String?
        /// Client certificate and key (both or neither).
        public var certFile: String?
        public var keyFile: String?
        public init() {}
    }

    public var host: String
    /// nil: 1883, or 8883 with TLS.
    public var port: Int?
    public var tls: TLS?
    public var username: String?
    /// The password read from `password_file` when the profile was loaded (never written in the
    /// profile itself, never printed).
    public var password: String?
    public var passwordFile: String?
    /// nil: `geomon-<profile name>`.
    public var clientID: String?
    /// The base topic (OwnTracks: `owntracks/USER/DEVICE`).
    public var topic: String
    /// OwnTracks `tid`: two characters; nil: the last two of the profile name.
    public var trackerID: String?
    public var qos: Int = 1
    public var locations: Locations = .significant
    /// The offline buffer's bound: beyond it the oldest locations are dropped (events never).
    public var maxPending: Int = 100_000
    /// Locations older than this are dropped from the buffer (events never).
    public var maxAge: Duration = .seconds(7 * 86400)
    /// MQTT keepalive: the idle ping interval and the connect timeout.
    public var keepalive: Duration = .seconds(60)
    /// Publish the retained `waypoints` message (the circle fences). Off when the consumer
    /// already has the zones (Home Assistant imports waypoints as zones of its own).
    public var waypoints = true
    /// The MQTT version (`protocol`): 5 unless the broker has only 3.1.1.
    public var protocolVersion: ProtocolVersion = .v5
    /// Publish the retained online status and set the offline will on `TOPIC/status`.
    public var status = true
    /// Accept OwnTracks commands on exactly `TOPIC/cmd` (`setWaypoints`, `clearWaypoints`,
    /// `waypoints`, `reportLocation`; docs/publish.md, "Commands").
    public var commands = false

    /// The one topic commands are read from.
    public var commandTopic: String { topic + "/cmd" }

    public init(host: String, topic: String) {
        self.host = host
        self.topic = topic
    }

    public var effectivePort: Int { port ?? (tls == nil ? 1883 : 8883) }

    public func effectiveClientID(profile: String) -> String { clientID ?? "geomon-\(profile)" }

    public func effectiveTrackerID(profile: String) -> String {
        if let trackerID { return trackerID }
        let letters = profile.filter { $0 != "-" }
        return String(letters.suffix(2))
    }
}

/// The device's battery as OwnTracks reports it (`batt`, `bs`), read by the shell.
public struct BatteryStatus: Hashable, Sendable {
    /// OwnTracks `bs`.
    public enum State: Int, Hashable, Sendable {
        case unknown = 0, unplugged = 1, charging = 2, full = 3
    }

    /// Charge in percent, 0…100.
    public var percent: Int
    public var state: State

    public init(percent: Int, state: State) {
        self.percent = max(0, min(100, percent))
        self.state = state
    }
}

/// One message to publish, as the store keeps it until the broker acknowledged it.
public struct Publication: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case location, transition, waypoints
        /// An empty retained message: deletes what a topic the profile no longer publishes on
        /// kept retained (the last location, the waypoints), after its consumers were told the
        /// device left (`OwnTracksRetirement`). Not retained, and stored as sent, it is only a
        /// marker that the topic is retired (`markRetired`), never sent.
        case clear
    }

    public var kind: Kind
    public var topic: String
    /// The JSON text, fixed when the message was made: a message published twice (QoS 1's
    /// at-least-once) is the same bytes both times.
    public var payload: String
    public var retain: Bool
    /// The fix or event time it describes.
    public var time: UTCTime
    /// The event it carries (written only with that event, once).
    public var eventID: String?

    public init(kind: Kind, topic: String, payload: String, retain: Bool, time: UTCTime, eventID: String? = nil) {
        self.kind = kind
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.time = time
        self.eventID = eventID
    }
}

/// A message in the outbox.
public struct StoredPublication: Hashable, Sendable {
    public var seq: Int64
    public var publication: Publication
    public var createdAt: UTCTime
    /// When the broker acknowledged it (or refused it); nil while pending.
    public var publishedAt: UTCTime?
    /// Why the broker refused it (an MQTT 5 PUBACK reason such as "not authorized"); nil when
    /// it was taken or is pending. A refused message is not sent again (dead letter) until
    /// `geomon publish retry --since` requeues it.
    public var refused: String?

    public init(seq: Int64, publication: Publication, createdAt: UTCTime, publishedAt: UTCTime? = nil, refused: String? = nil) {
        self.seq = seq
        self.publication = publication
        self.createdAt = createdAt
        self.publishedAt = publishedAt
        self.refused = refused
    }
}

/// Where the publisher takes its messages from and records their acknowledgement (the store).
public protocol PublicationOutbox: AnyObject {
    /// Pending messages after `seq`, oldest first, at most `limit`.
    func pendingPublications(after seq: Int64, limit: Int) throws -> [StoredPublication]
    /// Marks messages acknowledged by the broker.
    func markPublished(_ seqs: [Int64], at time: UTCTime) throws
    /// Marks messages the broker refused (MQTT 5 PUBACK with a failure reason), with the reason.
    func markRefused(_ refusals: [(seq: Int64, reason: String)], at time: UTCTime) throws
    func pendingPublicationCount() throws -> Int
}
