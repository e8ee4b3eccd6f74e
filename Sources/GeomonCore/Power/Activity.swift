/// What carries the device (`policy.activity`, or what a motion source senses): it names the
/// bounds the reachability planning assumes (docs/power.md, "Activity"). `any` is the profile's
/// own `max_speed` and `max_acceleration`, the bounds before activities existed.
public enum Activity: String, Hashable, Sendable, CaseIterable {
    case foot
    case bicycle
    case vehicle
    case boat
    case air
    case any

    /// The activity's bounds; nil for `any` (the profile's `max_speed` and `max_acceleration`).
    /// The figures and the published sources they rest on are in docs/power.md, "Activity".
    public var bounds: MotionBounds? {
        switch self {
        // Brisk walking tops out near 2.5 m/s (Bohannon 1997); 4 m/s is a 4:10 min/km run,
        // faster than the average pace of road races of every distance. A faster runner breaks
        // it, and the watch widens it for the run. Speeding up from a walk to a run takes seconds.
        case .foot: MotionBounds(maxSpeedMetersPerSecond: 4, maxAccelerationMetersPerSecondSquared: 1)
        // 72 km/h: a road bike's fast descent; everyday riding is 4–8 m/s, e-bikes assist to
        // 25 km/h, and everyday accelerations stay under 1 m/s².
        case .bicycle: MotionBounds(maxSpeedMetersPerSecond: 20, maxAccelerationMetersPerSecondSquared: 1)
        // 162 km/h, 1 m/s² sustained: the evaluation's vehicle (and the default profile's planning).
        case .vehicle: MotionBounds(maxSpeedMetersPerSecond: 45, maxAccelerationMetersPerSecondSquared: 1)
        // 25 kn: the service speed of fast merchant ships, above any yacht's hull speed;
        // a displacement hull changes its velocity by well under 0.5 m/s² (a tack included).
        case .boat: MotionBounds(maxSpeedMetersPerSecond: 13, maxAccelerationMetersPerSecondSquared: 0.5)
        // An airliner's ground speed in a jet stream; a 45° bank turns the velocity at 1 g.
        case .air: MotionBounds(maxSpeedMetersPerSecond: 350, maxAccelerationMetersPerSecondSquared: 10)
        case .any: nil
        }
    }
}

/// The reachability planning's assumptions about how the device moves.
public struct MotionBounds: Hashable, Sendable {
    public var maxSpeedMetersPerSecond: Double
    /// Largest change of the velocity vector per second apart from braking.
    public var maxAccelerationMetersPerSecondSquared: Double

    public init(maxSpeedMetersPerSecond: Double, maxAccelerationMetersPerSecondSquared: Double) {
        self.maxSpeedMetersPerSecond = maxSpeedMetersPerSecond
        self.maxAccelerationMetersPerSecondSquared = maxAccelerationMetersPerSecondSquared
    }

    /// The bounds after a violation at `observed` m/s (docs/power.md, "Assumptions watched"):
    /// `max_speed` becomes at least 1.5 × the observed speed (a device that broke its bound
    /// once is not planned at the edge of what it just did), rounded up to the next activity on
    /// the ground that holds it (foot, bicycle, vehicle: a walker who broke foot's bound is
    /// likely riding or driving, and a car speeding up breaks a bound set just above its speed
    /// again); the acceleration bound is not what broke, and stays. A speed beyond a
    /// vehicle's (45 m/s) is flying, or a position error two fixes shared: `air`'s bounds at
    /// once, its turns included (an aircraft climbing out would break every bound in between,
    /// and banks at up to 1 g), and 1.5 × the observed speed where that is more (a bound the
    /// device still outruns would hold its fixes as jumps). Never lower than before.
    public func widened(observedMetersPerSecond observed: Double) -> MotionBounds {
        var speed = Self.groundRungs.first { $0 >= 1.5 * observed } ?? 1.5 * observed
        var acceleration = maxAccelerationMetersPerSecondSquared
        if observed > Activity.vehicle.bounds!.maxSpeedMetersPerSecond, let air = Activity.air.bounds {
            speed = max(air.maxSpeedMetersPerSecond, 1.5 * observed)
            acceleration = max(acceleration, air.maxAccelerationMetersPerSecondSquared)
        }
        return MotionBounds(maxSpeedMetersPerSecond: max(maxSpeedMetersPerSecond, speed), maxAccelerationMetersPerSecondSquared: acceleration)
    }

    /// The bounds after a violation of the acceleration bound (docs/power.md, "Assumptions
    /// watched"): across a sleep the device covered more than the kinematic bound allows, so
    /// its speed grew faster than `max_acceleration` (or its reported speed was off by more than
    /// the speed error). `max_acceleration` becomes at least 1.5 × the least acceleration that
    /// would have covered the distance (not planned at the edge of what the device just did);
    /// `max_speed` is not what broke, and stays. Never lower than before.
    public func widened(observedAcceleration observed: Double) -> MotionBounds {
        MotionBounds(maxSpeedMetersPerSecond: maxSpeedMetersPerSecond,
                     maxAccelerationMetersPerSecondSquared: max(maxAccelerationMetersPerSecondSquared, 1.5 * observed))
    }

    /// The speeds of the activities on the ground, slowest first.
    static let groundRungs = [Activity.foot, .bicycle, .vehicle].map { $0.bounds!.maxSpeedMetersPerSecond }
}

/// A bound the last plan relied on that a GNSS fix broke (docs/power.md, "Assumptions watched").
public struct AssumptionViolation: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        /// Two consecutive fixes reported speeds above `max_speed` plus the speed error, and
        /// their positions moved faster than `max_speed`.
        case speed
        /// Across a sleep, a jump the screen held was confirmed: the displacement since the
        /// fix before the sleep, less both accuracies, needed more than `max_speed`.
        case reach
        /// Across a sleep, the displacement since the fix before it, less both accuracies and
        /// the wake margin, was more than the kinematic bound allows from the speed the plan
        /// took from that fix: the speed grew faster than `max_acceleration`, or was reported
        /// wrong by more than the speed error. Held until a second fix bore it out.
        case acceleration
    }
    public var kind: Kind
    public var time: UTCTime
    /// The speed that broke the bound: reported (`speed`) or implied by the displacement
    /// (`reach`, `acceleration`).
    public var observedMetersPerSecond: Double
    /// For `reach` and `acceleration`: the displacement less both accuracies, and the time it took.
    public var distanceMeters: Double?
    public var seconds: Double?
    /// For `acceleration`: the least acceleration under which the kinematic bound covers the
    /// displacement.
    public var observedAcceleration: Double?
    /// The bounds planned with, and those in effect from now on.
    public var planned: MotionBounds
    public var widened: MotionBounds

    public init(kind: Kind, time: UTCTime, observedMetersPerSecond: Double, distanceMeters: Double? = nil, seconds: Double? = nil,
                observedAcceleration: Double? = nil, planned: MotionBounds, widened: MotionBounds) {
        self.kind = kind
        self.time = time
        self.observedMetersPerSecond = observedMetersPerSecond
        self.distanceMeters = distanceMeters
        self.seconds = seconds
        self.observedAcceleration = observedAcceleration
        self.planned = planned
        self.widened = widened
    }
}

/// What the watch on assumptions keeps across fixes and restarts: the bounds widened for the
/// rest of the trip (nil: the planned activity's), the violations seen, and whether GNSS has
/// shown the motion sensor's `still` wrong (it is not believed until the sensor has said
/// moving again), with the sensor it concerns.
public struct AssumptionState: Hashable, Sendable {
    public var widened: MotionBounds?
    public var violations: Int
    public var stillDistrusted: Bool
    /// The sensor whose still GNSS showed wrong (`MotionSourceSettings.identity`); nil: not
    /// known (stored before it was kept), which keeps the verdict for any sensor.
    public var stillDistrustedSensor: String?

    public init(widened: MotionBounds? = nil, violations: Int = 0, stillDistrusted: Bool = false, stillDistrustedSensor: String? = nil) {
        self.widened = widened
        self.violations = violations
        self.stillDistrusted = stillDistrusted
        self.stillDistrustedSensor = stillDistrustedSensor
    }
}
