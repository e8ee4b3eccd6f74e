/// Why the engine decided an event: the rule and the numbers behind it, as plain values.
///
/// The shell words it (`GeomonFormat`'s `EventRule.text`), stores the words, and reads them
/// back as `.recorded`: the core decides, it does not write prose.
public enum EventRule: Hashable, Sendable {
    /// A confirmed change of side. `initialReport`: the first side seen was `inside` and the
    /// profile reports it (`transitions.initial: report`).
    case transition(Transition)
    /// Inside for the fence's dwell time.
    case dwell(Dwell)
    /// A significant location change (`moved` nil: the first usable fix).
    case location(Location)
    /// An approach band reached while moving towards the fence.
    case approach(Approach)
    /// A fence with `active:` windows became active while the device was inside it, and the
    /// profile reports a first inside (`transitions.initial: report`).
    case activated(insideSince: UTCTime)
    /// The device was inside a fence that stopped being watched: the exit consumers need so
    /// that they are never left "inside" (docs/engine.md, "Closing a stay").
    case closed(Closure)
    /// A stay whose enter the fence's cooldown held back was still on when the cooldown ended:
    /// its enter, delivered then (docs/engine.md, "Cooldown").
    case cooledDown(insideSince: UTCTime, cooldown: Duration)
    /// A movement rule (`movement:`) fired, with the event's figures.
    indirect case movement(EventKind, EventFigures)
    /// A rule known only by its words (an event read back from a database).
    case recorded(String)

    /// Why a stay was closed without the device leaving.
    public enum ClosureReason: String, Hashable, Sendable {
        /// The fence's `active:` window closed (or a profile edit left it outside its windows).
        case windowClosed = "window-closed"
        /// The fence is no longer in the profile (a reload, `clearWaypoints`, a removed waypoint).
        case removed
        /// The fence's name or geometry changed (a rename, a moved or resized fence).
        case replaced
    }

    public struct Closure: Hashable, Sendable {
        public var reason: ClosureReason
        /// When the stay began (its enter).
        public var insideSince: UTCTime?

        public init(reason: ClosureReason, insideSince: UTCTime?) {
            self.reason = reason
            self.insideSince = insideSince
        }
    }

    public struct Transition: Hashable, Sendable {
        public var from: FenceState
        public var to: FenceState
        public var initialReport: Bool
        /// Consecutive certain fixes that confirmed it.
        public var confirmations: Int
        /// The first confirming fix's signed distance (negative inside) and accuracy, and the hysteresis.
        public var firstSignedDistanceMeters: Double
        public var firstAccuracyMeters: Double
        public var hysteresisMeters: Double
        /// `transitions.confirm.time` when set (else zero), and how long the new side had been
        /// seen when the change was confirmed.
        public var confirmTime: Duration = .zero
        public var heldFor: Duration = .zero

        public init(from: FenceState, to: FenceState, initialReport: Bool, confirmations: Int,
                    firstSignedDistanceMeters: Double, firstAccuracyMeters: Double, hysteresisMeters: Double) {
            self.from = from
            self.to = to
            self.initialReport = initialReport
            self.confirmations = confirmations
            self.firstSignedDistanceMeters = firstSignedDistanceMeters
            self.firstAccuracyMeters = firstAccuracyMeters
            self.hysteresisMeters = hysteresisMeters
        }
    }

    public struct Dwell: Hashable, Sendable {
        public var insideSince: UTCTime
        public var dwell: Duration
        /// True: fired by the first fix past the dwell instant; false: by the deadline, at the
        /// enter position.
        public var byFix: Bool
        /// Which dwell of the stay this is (1 for the first) and `dwell.every`.
        public var number: Int = 1
        public var every: Duration?

        public init(insideSince: UTCTime, dwell: Duration, byFix: Bool) {
            self.insideSince = insideSince
            self.dwell = dwell
            self.byFix = byFix
        }
    }

    public struct Location: Hashable, Sendable {
        /// Distance from the last reported location, and the threshold; nil for the first fix.
        public var movedMeters: Double?
        public var thresholdMeters: Double
        public var elapsed: Duration?
        public var minInterval: Duration

        public init(movedMeters: Double?, thresholdMeters: Double, elapsed: Duration?, minInterval: Duration) {
            self.movedMeters = movedMeters
            self.thresholdMeters = thresholdMeters
            self.elapsed = elapsed
            self.minInterval = minInterval
        }
    }
}
