public import GeomonCore

/// What a running `geomon run` last said about itself (`geomon status`, heartbeat hooks): one
/// typed row of the `runtime_status` table, written with the daemon's commits.
public struct RuntimeStatus: Equatable, Sendable {
    public struct Source: Equatable, Sendable {
        /// `gpsd`, `command`, `geoclue`.
        public var plugin: String
        /// Where it is: gpsd's `host:port`, the command line, GeoClue's client path.
        public var endpoint: String?
        /// `connected`, `disconnected: REASON` (gpsd); `running`, `stopped` (a command);
        /// `started`, `waiting`, `off` (GeoClue).
        public var state: String
        /// GeoClue's accuracy level.
        public var accuracy: String?
        /// A coarse command's malformed lines so far.
        public var malformedLines: Int?
        /// The GNSS receiver's switch (`sources.gnss.power`).
        public var power: ReceiverPower?
        public init(plugin: String, endpoint: String? = nil, state: String, accuracy: String? = nil, malformedLines: Int? = nil) {
            self.plugin = plugin
            self.endpoint = endpoint
            self.state = state
            self.accuracy = accuracy
            self.malformedLines = malformedLines
        }
    }

    /// How the receiver is switched and what its own reports say.
    public struct ReceiverPower: Equatable, Sendable {
        /// `watch`, `ubx`, `mtk`, `command`.
        public var method: String
        /// `on`, `off`, or `always on (the switch has no effect)`.
        public var state: String
        /// On-time measured from the receiver's reports since the daemon started.
        public var measuredOnSeconds: Double
        public init(method: String, state: String, measuredOnSeconds: Double) {
            self.method = method
            self.state = state
            self.measuredOnSeconds = measuredOnSeconds
        }
    }

    /// The motion sensor (`sources.motion`).
    public struct Motion: Equatable, Sendable {
        /// `iio` or `command`.
        public var plugin: String
        /// `moving`, `still`, `silent` (no word for `stale_after`) or `unknown` (nothing yet).
        public var state: String
        /// Since when (the system's clock), once it said something.
        public var since: UTCTime?
        public init(plugin: String, state: String, since: UTCTime?) {
            self.plugin = plugin
            self.state = state
            self.since = since
        }
    }

    /// The bounds the power policy plans with (docs/power.md, "Activity").
    public struct Planning: Equatable, Sendable {
        /// The activity in effect, e.g. `foot`.
        public var activity: String
        /// `declared` (the profile's `policy.activity`) or `sensed` (the motion source).
        public var from: String
        /// The bounds in effect, e.g. `max_speed 7 m/s, max_acceleration 2.5 m/s²`.
        public var bounds: String
        /// Whether a violation widened them for this trip.
        public var widened: Bool
        /// Violations seen (kept across restarts).
        public var violations: Int
        /// The hot start planned with, and the median of the measured first fixes after hot
        /// wakes (nil before any) over `ttffSamples` of them.
        public var ttffHotSeconds: Double?
        public var ttffMeasuredSeconds: Double?
        public var ttffSamples = 0
        public init(activity: String, from: String, bounds: String, widened: Bool, violations: Int) {
            self.activity = activity
            self.from = from
            self.bounds = bounds
            self.widened = widened
            self.violations = violations
        }
    }

    public struct MQTT: Equatable, Sendable {
        public var broker: String
        public var topic: String
        /// `connected`, `connecting`, `disconnected[: REASON]`.
        public var state: String
        public var published: Int
        public init(broker: String, topic: String, state: String, published: Int) {
            self.broker = broker
            self.topic = topic
            self.state = state
            self.published = published
        }
    }

    public var running = false
    public var pid = 0
    public var profile = ""
    public var mode = ""
    /// What the power policy wants, and why.
    public var receiverOn = false
    public var receiverReason = "starting"
    public var gnss: Source?
    public var coarse: Source?
    public var motion: Motion?
    public var planning: Planning?
    public var lastFix: Fix?
    /// Fences the device is inside, in profile order.
    public var inside: [String] = []
    /// The ids of the profile's own fences, as loaded at start or the last reload (not those
    /// pushed or placed): `geomon fences here` refuses them, as a profile fence would hide
    /// the placed one.
    public var profileFences: [String] = []
    public var mqtt: MQTT?
    public var uptimeSeconds = 0
    public var loopWakeups = 0
    public var hooksRunning = 0
    /// When it was written (the system's wall clock).
    public var updated = UTCTime(millisecondsSince1970: 0)

    public init() {}
}
