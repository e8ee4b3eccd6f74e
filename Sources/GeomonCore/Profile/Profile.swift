/// A validated monitoring profile: what to watch, how, and whom to tell.
///
/// Built by `GeomonConfig` from YAML (keeping source locations for diagnostics); everything
/// here is plain values so the core can decide on it without I/O. Paths are already resolved
/// against the profile's directory.
public struct Profile: Sendable {
    public var version: Int = 1
    public var name: String
    public var description: String?
    public var mode: MonitoringMode
    public var sources: SourceSettings = SourceSettings()
    public var significantChange: SignificantChangeSettings = SignificantChangeSettings()
    /// Events about movement itself (`movement:`): motion, trips, visits.
    public var movement: MovementSettings = MovementSettings()
    public var policy: PolicySettings = PolicySettings()
    /// `modes:`: the entries that change the profile's settings while their conditions hold,
    /// in order (docs/engine.md, "Modes").
    public var modes: [ModeRule] = []
    public var transitions: TransitionSettings = TransitionSettings()
    /// The places to watch. Setting them drops `fenceIndex` (it described the old ones).
    public var fences: [Fence] = [] {
        didSet { fenceIndex = nil }
    }
    /// The fences' index when it was built while loading (fence `i` is `fences[i]`): fences
    /// streamed from GeoJSON files then keep their geometry only there (`Fence.shape` nil).
    /// nil for a profile made in code; `makeIndex()` builds one from the shapes.
    public private(set) var fenceIndex: FenceIndex?
    public var hooks: HookSettings = HookSettings()
    public var publish: PublishSettings = PublishSettings()
    public var storage: StorageSettings = StorageSettings()
    /// The time zone fences' `active:` windows are in (`timezone`, default the system's).
    public var timeZone: TimeZoneRules = .utc
    /// Absolute path of the profile file, when it came from one.
    public var path: String?
    /// The profile's own directory; relative paths in the profile resolve against it.
    public var directory: String = "."

    public init(name: String, mode: MonitoringMode) {
        self.name = name
        self.mode = mode
    }

    /// How the receiver is switched off (`sources.gnss.power`; `watch` without a GNSS source).
    public var powerMethod: GNSSPowerMethod { sources.gnss?.power ?? .watch }

    /// The receiver's figures as its power method's restart class makes them
    /// (`ReceiverSettings.restarting`): what the policy plans with and replay charges.
    public var receiver: ReceiverSettings {
        policy.receiver.restarting(restartClass)
    }

    /// How a wake restarts the receiver: `sources.gnss.restart`, else its power method's class.
    public var restartClass: RestartClass { sources.gnss?.effectiveRestart ?? powerMethod.defaultRestart }

    /// Sets the fences with the index built for them (their order is the index's).
    public mutating func setFences(_ fences: [Fence], index: FenceIndex) {
        precondition(fences.count == index.count, "the index must hold exactly these fences")
        self.fences = fences
        fenceIndex = index
    }

    /// The index to monitor with: the one built while loading, or one built from the shapes.
    public func makeIndex() -> FenceIndex {
        if let fenceIndex { return fenceIndex }
        return FenceIndex(shapes: fences.map { fence in
            guard let shape = fence.shape else { preconditionFailure("fence '\(fence.id)' has no shape and the profile no index") }
            return shape
        })
    }

    /// Fence `i`'s geometry: its shape, or (streamed from a file) the index's.
    public func shape(of i: Int) -> FenceShape {
        if let shape = fences[i].shape { return shape }
        guard let fenceIndex else { preconditionFailure("fence '\(fences[i].id)' has no shape and the profile no index") }
        return fenceIndex.shape(of: i)
    }

    /// The profile as the mode `rule` runs it: its monitoring mode, policy, MQTT location
    /// stream and coarse source over the profile's own.
    public func applying(_ rule: ModeRule?) -> Profile {
        guard let rule else { return self }
        var profile = self
        if let mode = rule.mode { profile.mode = mode }
        if let policy = rule.policy { profile.policy = policy }
        if let locations = rule.mqttLocations { profile.publish.mqtt?.locations = locations }
        if rule.coarse == false { profile.sources.coarse = nil }
        return profile
    }

    /// Every fence with its geometry (for pictures and listings; a large file costs its shapes).
    public var fencesWithShapes: [Fence] {
        fences.indices.map { i in
            var fence = fences[i]
            if fence.shape == nil { fence.shape = shape(of: i) }
            return fence
        }
    }
}

public enum MonitoringMode: String, Hashable, Sendable, CaseIterable {
    case continuous
    case significantChange = "significant-change"
    case regions
}

public struct SourceSettings: Sendable {
    public var gnss: GNSSSourceSettings?
    public var coarse: CoarseSourceSettings?
    public var motion: MotionSourceSettings?
    public init(gnss: GNSSSourceSettings? = nil, coarse: CoarseSourceSettings? = nil) {
        self.gnss = gnss
        self.coarse = coarse
    }
}

public struct GNSSSourceSettings: Sendable {
    public var plugin: String = "gpsd"
    public var host: String = "127.0.0.1"
    public var port: Int = 2947
    public var device: String?
    /// Fixes with a worse horizontal accuracy never change fence state.
    public var minAccuracyMeters: Double = 50
    /// How "receiver off" is done (docs/power.md, "Switching the receiver").
    public var power: GNSSPowerMethod = .watch
    /// What a wake costs after the method switched the receiver off (`restart:` in
    /// `sources.gnss.power`); nil: the method's own (`GNSSPowerMethod.defaultRestart`).
    public var restart: RestartClass?
    public init() {}

    /// The restart class the policy and the energy model assume.
    public var effectiveRestart: RestartClass { restart ?? power.defaultRestart }
}

/// What a receiver keeps while it is off, and so what its next fix costs (docs/power.md,
/// "Restart classes").
public enum RestartClass: String, Sendable, CaseIterable {
    /// Time, almanac and ephemeris kept (GNSS stopped, standby, backup with V_BCKP): `ttff_hot`
    /// within `hot_window` of the switch-off, `ttff_warm` after it.
    case hot
    /// Time and almanac kept, ephemeris not (power cut with a backup battery): `ttff_warm`.
    case warm
    /// Nothing kept (power cut, no backup battery): `ttff_cold`.
    case cold

    /// The least class whose time to first fix (from `receiver`, the profile's own figures)
    /// covers a measured one: what `geomon receiver test` suggests when a wake took longer
    /// than the class the profile assumes.
    public static func covering(_ measured: Duration, receiver: ReceiverSettings) -> RestartClass {
        if measured <= receiver.ttffHot { return .hot }
        if measured <= receiver.ttffWarm { return .warm }
        return .cold
    }

    /// The shortest warm start: a receiver without ephemeris must read subframes 1–3 of a
    /// satellite's navigation message (3 × 6 s at 50 bit/s, IS-GPS-200 §20.3.2) after it
    /// acquires the signal, so a first fix sooner than this kept its ephemeris: a slow hot
    /// start, not a warm one.
    public static let shortestWarmStart = Duration.seconds(18)

    /// What `geomon receiver test` advises for a first fix `measured` after switching on,
    /// when the profile plans `assumed` starts with `receiver`'s figures (nil: nothing, the
    /// plan covers it). A fix slower than the planned hot start but sooner than a warm start
    /// can be (`shortestWarmStart`, or `ttff_warm` when shorter) is a slow hot start: raise
    /// `ttff_hot` to the measured time, rounded up to a whole second. Only slower fixes name
    /// the warm (or cold) class that covers them, since that class costs far more power.
    public static func advice(measured: Duration, assumed: RestartClass, receiver: ReceiverSettings) -> RestartAdvice? {
        let planned = receiver.restarting(assumed).ttffHot
        guard measured > planned else { return nil }
        if assumed == .hot, measured < min(shortestWarmStart, receiver.ttffWarm) {
            let ms = measured.wholeMilliseconds
            return .ttffHot(.seconds((ms + 999) / 1000))
        }
        let fits = covering(measured, receiver: receiver)
        return fits.isSlower(than: assumed) ? .restart(fits) : nil
    }

    /// Whether a wake of this class takes longer than one of `other`.
    public func isSlower(than other: RestartClass) -> Bool {
        Self.allCases.firstIndex(of: self)! > Self.allCases.firstIndex(of: other)!
    }
}

/// What `geomon receiver test` advises after a slower first fix than planned.
public enum RestartAdvice: Hashable, Sendable {
    /// A slow hot start: set `policy.receiver.ttff_hot` to this.
    case ttffHot(Duration)
    /// The receiver loses more than the profile assumes: `restart:` this class.
    case restart(RestartClass)
}

/// `sources.gnss.power`: what switching the receiver off and on does to it.
public enum GNSSPowerMethod: Sendable, Equatable {
    /// Only gpsd's watch is turned off: the receiver saves power only where gpsd closes the
    /// device (no `-n`, after its 60 s release) and the device powers down on close.
    case watch
    /// u-blox through gpsd: UBX-CFG-RST controlled GNSS stop (off) and start (on).
    case ubx
    /// MediaTek/Quectel through gpsd: `$PMTK161,0` standby (off); any byte wakes it (on).
    case mtk
    /// Programs run for off and on (an enable pin, USB port power, a vendor tool).
    case command(on: [String], off: [String])
    /// GNSS inside a cellular modem: ModemManager's `Modem.Location.Setup` clears (off) and
    /// restores (on) the GNSS location sources; the modem's NMEA still reaches gpsd. `modem`:
    /// its D-Bus object path, nil for the first modem ModemManager lists.
    case modemmanager(modem: String?)

    public var name: String {
        switch self {
        case .watch: "watch"
        case .ubx: "ubx"
        case .mtk: "mtk"
        case .command: "command"
        case .modemmanager: "modemmanager"
        }
    }

    /// How long the receiver stays powered after the policy switches it off: gpsd closes an
    /// unwatched device only after its `RELEASE_TIMEOUT` (60 s), so with `watch` every off
    /// period costs up to that much tracking (and everything with `gpsd -n`, which this does
    /// not model). nil: the method switches the receiver at once.
    public var releaseDelay: Duration? { self == .watch ? .seconds(60) : nil }

    /// What the method leaves the receiver with: the commands of `ubx`, `mtk` and
    /// `modemmanager` stop GNSS with the receiver powered (hot); `watch` never stops it; a
    /// `command` may cut the power, and without a backup battery that is a cold start.
    public var defaultRestart: RestartClass {
        if case .command = self { return .cold }
        return .hot
    }

    /// Whether the method switches the receiver itself, so that gpsd's watch stays open while
    /// it is off and the daemon can see that its reports stop.
    public var switchesReceiver: Bool { self != .watch }
}

/// `sources.motion`: a motion sensor that keeps the receiver off while the device stands still
/// (docs/power.md, "Wake on motion").
public struct MotionSourceSettings: Sendable {
    public enum Plugin: String, Sendable, CaseIterable {
        /// A Linux IIO accelerometer read from sysfs.
        case iio
        /// A program printing JSON lines `{"moving": true|false}`.
        case command
    }

    public var plugin: Plugin = .iio
    /// `iio`: the device's sysfs directory; nil: the first `/sys/bus/iio/devices/iio:deviceN`
    /// with `in_accel_x_raw`.
    public var device: String?
    /// `command`: the program and its arguments.
    public var exec: [String] = []
    /// `iio`: how often the accelerometer is read (`sample`).
    public var sampleHertz: Double = 2
    /// `iio`: the window over which the acceleration magnitude's spread is taken (`window`).
    public var window: Duration = .seconds(10)
    /// `iio`: a standard deviation of the magnitude above this over the window is movement
    /// (`threshold`); the engine of a parked car idling is below it, a drive above.
    public var thresholdMetersPerSecondSquared: Double = 0.15
    /// `iio`: a standard deviation above this over a full window is a walk or a run, between
    /// `threshold` and this a vehicle (`foot_threshold`; docs/sources.md).
    public var footThresholdMetersPerSecondSquared: Double = 2
    /// How long without movement counts as still (`still_after`): the hysteresis in time.
    public var stillAfter: Duration = .seconds(60)
    /// No word from the sensor for this long and it counts as absent (`stale_after`).
    public var staleAfter: Duration = .seconds(300)
    /// `command`: restart period when the program exits.
    public var restartInterval: Duration = .seconds(30)
    /// How long the source may take to notice a change of activity (`latency`); nil: the
    /// default, `activityLatency`.
    public var latency: Duration?
    /// The fastest the device may move while the sensor says still (`creep_speed`): an
    /// accelerometer feels changes of velocity, not a steady drift (a boat dragging its anchor,
    /// a ship swinging round it). While still, GNSS checks back when a boundary could be reached
    /// at this speed (docs/power.md, "Wake on motion"); 0 trusts still for good.
    public var creepSpeedMetersPerSecond: Double = MotionSourceSettings.defaultCreepSpeedMetersPerSecond
    /// 0.5 m/s: the speed below which the replay's sensor model (`MotionSignal`) calls a
    /// recording still, and about a dragging anchor's 1 kn.
    public static let defaultCreepSpeedMetersPerSecond = 0.5
    public init() {}

    /// `latency`, or its default: the accelerometer's classifier decides over one `window`;
    /// a command is given 10 s.
    public var activityLatency: Duration { latency ?? (plugin == .iio ? window : .seconds(10)) }

    /// Which sensor this is: its plugin, device and program (what GNSS's verdict on its still
    /// concerns, `AssumptionState.stillDistrustedSensor`).
    public var identity: String { ([plugin.rawValue, device ?? ""] + exec).joined(separator: "\t") }
}

public struct CoarseSourceSettings: Sendable {
    /// `command` (a program printing JSON lines) or `geoclue` (the GeoClue2 service).
    public var plugin: String = "command"
    public var exec: [String] = []
    /// Restart period when the program exits.
    public var interval: Duration = .seconds(300)
    /// Typical accuracy of the coarse source, used by lint rules and replay's degradation.
    public var expectedAccuracyMeters: Double = 500
    /// `plugin: geoclue`'s settings.
    public var geoclue: GeoClueSettings?
    public init() {}
}

/// `sources.coarse` with `plugin: geoclue` (docs/sources.md).
public struct GeoClueSettings: Hashable, Sendable {
    /// GeoClue's `RequestedAccuracyLevel`.
    public enum Accuracy: String, Hashable, Sendable, CaseIterable {
        case city, neighborhood, street, exact

        /// What a position at this level is typically worth (GeoClue's city level is GeoIP or
        /// Wi-Fi, shifted by 1–2 km on purpose): the coarse source's expected accuracy, and
        /// the accuracy assumed when GeoClue reports none.
        public var expectedAccuracyMeters: Double {
            switch self {
            case .city: 6000
            case .neighborhood: 1000
            case .street: 100
            case .exact: 30
            }
        }

        /// How far GeoClue's answers at this level scatter around the truth from one answer to
        /// the next (city: its deliberate 1–2 km shift); replay's derived coarse fixes use it.
        public var scatterMeters: Double {
            switch self {
            case .city: 2000
            case .neighborhood: 500
            case .street: 100
            case .exact: 10
            }
        }
    }

    public var accuracy: Accuracy = .city
    public var desktopID = "geomon"
    /// GeoClue's own thresholds (0: every update).
    public var distanceThresholdMeters: Double = 0
    public var timeThreshold: Duration = .zero
    /// Register geomon as GeoClue's authorization agent for its own user.
    public var agent = false
    public init() {}
}

public struct SignificantChangeSettings: Sendable {
    public var distanceMeters: Double = 500
    public var minInterval: Duration = .seconds(300)
    public init() {}
}

public struct StationarySettings: Sendable {
    public var radiusMeters: Double = 50
    public var timeout: Duration = .seconds(300)
    public init() {}
}

public struct ReceiverSettings: Sendable {
    public var ttffHot: Duration = .seconds(2)
    public var ttffWarm: Duration = .seconds(30)
    public var hotWindow: Duration = .seconds(7200)
    /// Time to first fix after a cold start (`ttff_cold`): the receiver kept nothing. A
    /// `ttff_warm` set longer stands for it too (`restarting`).
    public var ttffCold: Duration = .seconds(35)
    public var powerAcquireMilliwatts: Double = 120
    public var powerTrackMilliwatts: Double = 90
    /// The break-even off time (`policy.receiver.min_off`): a budget sleep that would switch
    /// the receiver off for less is not taken. nil: `effectiveMinOff`'s rule.
    public var minOff: Duration?
    public init() {}

    /// The settings as a receiver of restart class `restart` meets them: `warm` starts every
    /// wake warm (`ttff_hot` becomes `ttff_warm`), `cold` every wake cold (both become
    /// `ttff_cold`); `hot` leaves them as they are.
    public func restarting(_ restart: RestartClass) -> ReceiverSettings {
        var settings = self
        switch restart {
        case .hot: break
        case .warm: settings.ttffHot = ttffWarm
        case .cold:
            settings.ttffHot = max(ttffCold, ttffWarm)
            settings.ttffWarm = max(ttffCold, ttffWarm)
        }
        return settings
    }

    /// `min_off`, or where the profile sets none the break-even of the energy figures: off for
    /// `T` then a hot start saves `T × power_track` and costs `ttff_hot × (power_acquire −
    /// power_track)`, so `T = ttff_hot × (power_acquire / power_track − 1)` (0.67 s with the
    /// defaults; 0 when acquiring costs no more than tracking).
    static let longestMinOffSeconds = 3650.0 * 86_400

    public var effectiveMinOff: Duration {
        if let minOff { return minOff }
        guard powerTrackMilliwatts > 0, powerAcquireMilliwatts > powerTrackMilliwatts else { return .zero }
        // Held within the longest duration a profile takes (3650 d): a tracking power near
        // zero makes switching off never pay, not a number past what a duration holds.
        let product = ttffHot.secondsValue * (powerAcquireMilliwatts / powerTrackMilliwatts - 1)
        // No time to acquire costs nothing, however the powers compare (0 × ∞ is no number).
        guard !product.isNaN else { return .zero }
        let seconds = min(product, Self.longestMinOffSeconds)
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }
}

/// What the receiver does when no fix came within the listen and a boundary could already be
/// reached from the last fix (`policy.outage`; docs/power.md, "Fix timeout and listens").
public enum OutageRule: String, Hashable, Sendable, CaseIterable {
    /// Switch off and retry every `retry_max_interval` with short listens: cheaper, but a short
    /// burst of fixes between outages is caught only if the receiver happens to be on.
    case retry
    /// Stay on and wait, as a receiver in a tunnel would: every fix the sky gives is seen.
    case wait
}

public struct PolicySettings: Sendable {
    /// What carries the device (`activity`): the bounds the planning assumes unless `max_speed`
    /// or `max_acceleration` are set (`plannedBounds`).
    public var activity: Activity = .any
    /// `max_speed`: with `activity: any` (or set explicitly) the planning's speed bound.
    public var maxSpeedMetersPerSecond: Double = 30
    /// Largest change of the velocity vector per second apart from braking (`max_acceleration`):
    /// the reachability bound's assumption (docs/power.md). 1 m/s² suits cars; walkers allow less.
    public var maxAccelerationMetersPerSecondSquared: Double = 1.0
    /// Whether the profile sets `max_speed` / `max_acceleration` (they then override the activity's).
    public var maxSpeedSet = false
    public var maxAccelerationSet = false

    /// The bounds the planning assumes for the declared activity: the activity's, with
    /// `max_speed` and `max_acceleration` where the profile sets them; `any`: those two.
    public var plannedBounds: MotionBounds { bounds(for: activity) }

    /// The bounds for `activity` (sensed or declared): the profile's `max_speed` and
    /// `max_acceleration` override the declared activity's figures and make up `any`'s.
    public func bounds(for activity: Activity) -> MotionBounds {
        guard let table = activity.bounds else {
            return MotionBounds(maxSpeedMetersPerSecond: maxSpeedMetersPerSecond, maxAccelerationMetersPerSecondSquared: maxAccelerationMetersPerSecondSquared)
        }
        guard activity == self.activity else { return table }
        return MotionBounds(maxSpeedMetersPerSecond: maxSpeedSet ? maxSpeedMetersPerSecond : table.maxSpeedMetersPerSecond,
                            maxAccelerationMetersPerSecondSquared: maxAccelerationSet ? maxAccelerationMetersPerSecondSquared : table.maxAccelerationMetersPerSecondSquared)
    }
    public var wakeMarginMeters: Double = 50
    public var minSleep: Duration = .seconds(10)
    public var maxSleep: Duration = .seconds(1800)
    public var fixTimeout: Duration = .seconds(90)
    /// How long a short listen lasts (`retry_fix_timeout`): a retry after a fix timeout, a
    /// hot start, or waiting for the next fix with nothing undecided; nil: the default,
    /// `ttff_hot + 15 s`, at most `fix_timeout` (`effectiveRetryFixTimeout`).
    public var retryFixTimeout: Duration?
    /// Cap of the retry interval after fix timeouts (`retry_max_interval`; it doubles from
    /// `min_sleep`): bounds how late the return of the signal is seen. nil: the default
    /// (`effectiveRetryMaxInterval`).
    public var retryMaxInterval: Duration?
    /// How late the policy may see a state change (`max_latency`, docs/power.md, "Sleeping
    /// within a latency budget"): it may sleep where a boundary is within reach as long as no
    /// full excursion fits in the sleep and a change starting now is confirmed within this.
    /// Zero: never sleep while a boundary may be within reach.
    public var maxLatency: Duration = .seconds(30)
    /// What the receiver does in an outage once a boundary could be reached (`outage`); nil:
    /// the mode's default (`retry` in regions, `wait` in continuous; `effectiveOutage`).
    public var outage: OutageRule?
    public var stationary: StationarySettings = StationarySettings()
    public var receiver: ReceiverSettings = ReceiverSettings()
    public init() {}

    /// `outage`, or the default of `mode`: `wait` in continuous, `retry` otherwise.
    public func effectiveOutage(mode: MonitoringMode) -> OutageRule {
        outage ?? (mode == .continuous ? .wait : .retry)
    }

    /// `retry_max_interval`, or its default: `max_latency − ttff_hot` (the signal's return is
    /// then seen within `max_latency`), at least `min_sleep`; 10 s with `max_latency: 0`. The
    /// policy moves the default with the hot start it learns (`PowerConfiguration.setTTFFHot`).
    public var effectiveRetryMaxInterval: Duration {
        if let retryMaxInterval { return retryMaxInterval }
        guard maxLatency > .zero else { return .seconds(10) }
        return Self.defaultRetryMaxInterval(maxLatency: maxLatency, ttffHot: receiver.ttffHot, minSleep: minSleep)
    }

    /// The default `retry_max_interval` with a latency budget: `max_latency − ttff_hot`, at
    /// least `min_sleep`.
    public static func defaultRetryMaxInterval(maxLatency: Duration, ttffHot: Duration, minSleep: Duration) -> Duration {
        max(minSleep, maxLatency - ttffHot)
    }

    /// `retry_fix_timeout`, or its default `ttff_hot + 15 s`; never longer than `fix_timeout`.
    /// The policy moves the default with the hot start it learns (`PowerConfiguration.setTTFFHot`).
    public var effectiveRetryFixTimeout: Duration {
        min(fixTimeout, retryFixTimeout ?? Self.defaultRetryFixTimeout(ttffHot: receiver.ttffHot))
    }

    /// The default `retry_fix_timeout` before the `fix_timeout` cap: 15 s beyond a hot start.
    /// A receiver that had a fix minutes ago reacquires within `ttff_hot` under open sky; one
    /// that gets nothing for 15 s more is in a tunnel, a garage or a building.
    public static func defaultRetryFixTimeout(ttffHot: Duration) -> Duration {
        ttffHot + .seconds(15)
    }
}

public enum InitialReport: String, Hashable, Sendable {
    /// The first certain state of a fence is recorded without an event.
    case silent
    /// The first certain "inside" is reported as an enter event.
    case report
}

public struct TransitionSettings: Sendable {
    public var hysteresisMeters: Double = 10
    /// Consecutive certain fixes needed to change state (`confirm`, or `confirm.fixes`).
    public var confirm: Int = 2
    /// How long the new side must have been seen, from the first fix that showed it to the
    /// one that confirms (`confirm.time`); a change is confirmed when both hold.
    public var confirmTime: Duration = .zero
    public var initial: InitialReport = .silent
    public init() {}
}

/// The kinds of events geomon emits.
public enum EventKind: String, Hashable, Sendable, CaseIterable, Comparable {
    case enter
    case exit
    case dwell
    case location
    /// An approach band reached while moving towards a fence (`approach:`).
    case approach
    /// The motion state changed (`movement.motion`).
    case moving
    case still
    /// A trip began or ended (`movement.trips`).
    case tripStart = "trip_start"
    case tripEnd = "trip_end"
    /// A visit began or ended (`movement.visits`).
    case arrival
    case departure
    /// The speed in a fence with `speed_limit:` stayed above it, and then no longer did.
    case overspeed
    case overspeedEnd = "overspeed_end"
    /// The mode changed (`modes:`).
    case mode

    /// The events about movement (`movement:`, and `speed_limit:` on fences): published as a
    /// location with their figures.
    public var isMovement: Bool {
        switch self {
        case .moving, .still, .tripStart, .tripEnd, .arrival, .departure, .overspeed, .overspeedEnd: true
        case .enter, .exit, .dwell, .location, .approach, .mode: false
        }
    }

    public static func < (lhs: EventKind, rhs: EventKind) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// `speed_limit` on a fence: `overspeed` once the speed stays above `limit + tolerance` for
/// `duration` inside the fence, `overspeed_end` when it no longer is (docs/engine.md, "Speed in
/// a zone").
public struct SpeedLimit: Hashable, Sendable {
    public var limitMetersPerSecond: Double
    public var toleranceMetersPerSecond: Double = 0
    public var duration: Duration = .seconds(10)

    public init(limitMetersPerSecond: Double, toleranceMetersPerSecond: Double = 0, duration: Duration = .seconds(10)) {
        self.limitMetersPerSecond = limitMetersPerSecond
        self.toleranceMetersPerSecond = toleranceMetersPerSecond
        self.duration = duration
    }

    /// Above this is over the limit.
    public var thresholdMetersPerSecond: Double { limitMetersPerSecond + toleranceMetersPerSecond }
}

/// A polygon with optional holes; rings are lists of vertices (closing vertex optional,
/// either orientation). Edges are straight lines in longitude/latitude (GeoJSON semantics).
public struct PolygonRings: Hashable, Sendable {
    public var shell: [Coordinate]
    public var holes: [[Coordinate]]
    public init(shell: [Coordinate], holes: [[Coordinate]] = []) {
        self.shell = shell
        self.holes = holes
    }
}

public enum FenceShape: Hashable, Sendable {
    case circle(center: Coordinate, radiusMeters: Double)
    /// One or more polygons (a GeoJSON MultiPolygon has several).
    case polygons([PolygonRings])
    /// Everything within `widthMeters / 2` of one or more lines (a route, a trail): a
    /// GeoJSON LineString or MultiLineString with a width. Edges are straight in lon/lat.
    case corridor(lines: [[Coordinate]], widthMeters: Double)

    /// "circle", "polygon" or "corridor".
    public var kind: String {
        switch self {
        case .circle: "circle"
        case .polygons: "polygon"
        case .corridor: "corridor"
        }
    }
}

public struct Fence: Sendable {
    public var id: String
    public var name: String?
    /// The geometry; nil for a fence streamed from a GeoJSON file, whose geometry lives in its
    /// profile's `fenceIndex` only (`Profile.shape(of:)`).
    public var shape: FenceShape?
    public var events: Set<EventKind> = [.enter, .exit]
    /// Inside this long reports `dwell` (`dwell`, or `dwell.after`).
    public var dwell: Duration?
    /// Then again every this long while still inside (`dwell.every`); nil: once per stay.
    public var dwellEvery: Duration? {
        get { rules.dwellEvery }
        set { setRules { $0.dwellEvery = newValue } }
    }
    /// Approach bands (`approach`); nil: no approach events.
    public var approach: ApproachSettings? {
        get { rules.approach }
        set { setRules { $0.approach = newValue } }
    }
    /// When the fence reports events (`active`); nil: always.
    public var active: FenceSchedule? {
        get { rules.active }
        set { setRules { $0.active = newValue } }
    }
    /// The OwnTracks identity (`tst`) of a fence that came as a waypoint (pushed with
    /// `setWaypoints`, or read from an `.otrw` file), echoed in `waypoints` and as `wtst` so
    /// the server matches it; nil: a stable number from the id (`OwnTracks.waypointTime`).
    public var waypointTime: Int64? {
        get { rules.waypointTime }
        set { setRules { $0.waypointTime = newValue } }
    }
    /// A new enter/exit pair this soon after the last delivered one is stored, not delivered
    /// (`cooldown`; docs/engine.md, "Cooldown"); nil: every pair is delivered.
    public var cooldown: Duration? {
        get { rules.cooldown }
        set { setRules { $0.cooldown = newValue } }
    }
    /// The speed limit inside the fence (`speed_limit`); nil: none.
    public var speedLimit: SpeedLimit? {
        get { rules.speedLimit }
        set { setRules { $0.speedLimit = newValue } }
    }
    /// The rules few fences have, boxed: a fence without them costs one pointer (a file of
    /// 10^5 fences is held in memory).
    private var extras: Extras?

    private struct Rules: Hashable, Sendable {
        var dwellEvery: Duration?
        var approach: ApproachSettings?
        var active: FenceSchedule?
        var waypointTime: Int64?
        var cooldown: Duration?
        var speedLimit: SpeedLimit?
    }

    private final class Extras: Sendable {
        let rules: Rules
        init(_ rules: Rules) { self.rules = rules }
    }

    private var rules: Rules { extras?.rules ?? Rules() }

    private mutating func setRules(_ edit: (inout Rules) -> Void) {
        var rules = self.rules
        edit(&rules)
        extras = rules == Rules() ? nil : Extras(rules)
    }

    /// Where the fence was defined (a profile line, or a feature inside a GeoJSON file).
    public var location: SourceLocation? = nil
    /// For a fence pushed over MQTT (`setWaypoints`): when and by which stored command
    /// (`PushedFence.origin`); nil for the profile's own.
    public var pushed: String? = nil

    public init(id: String, name: String? = nil, shape: FenceShape?, events: Set<EventKind> = [.enter, .exit], dwell: Duration? = nil) {
        self.id = id
        self.name = name
        self.shape = shape
        self.events = events
        self.dwell = dwell
    }
}

/// Conditions a hook's deliveries wait for.
public struct HookConditions: Hashable, Sendable {
    public var network: Bool = false
    public var externalPower: Bool = false
    public init(network: Bool = false, externalPower: Bool = false) {
        self.network = network
        self.externalPower = externalPower
    }
}

public struct HookSpec: Hashable, Sendable {
    /// argv, run directly without a shell; `exec[0]` resolved against the profile directory.
    public var exec: [String]
    public var timeout: Duration = .seconds(30)
    public var when: HookConditions = HookConditions()
    /// Extra variables (`env:` and the contents of `env_file:`), given to the hook's process
    /// beside geomon's own; never in argv, so never visible in `ps`.
    public var environment: [String: String] = [:]
    public init(exec: [String], timeout: Duration = .seconds(30), when: HookConditions = HookConditions(), environment: [String: String] = [:]) {
        self.exec = exec
        self.timeout = timeout
        self.when = when
        self.environment = environment
    }
}

public struct RetrySettings: Hashable, Sendable {
    public var attempts: Int = 8
    public var backoff: Duration = .seconds(2)
    public var maxBackoff: Duration = .seconds(600)
    public init() {}
}

public struct HookSettings: Sendable {
    /// The PATH every hook runs with, and where a bare program name (`curl`) is looked up when
    /// it is not in the profile's directory.
    public static let searchPath = "/usr/local/bin:/usr/bin:/bin"

    public var enter: [HookSpec] = []
    public var exit: [HookSpec] = []
    public var dwell: [HookSpec] = []
    public var location: [HookSpec] = []
    public var approach: [HookSpec] = []
    public var moving: [HookSpec] = []
    public var still: [HookSpec] = []
    public var tripStart: [HookSpec] = []
    public var tripEnd: [HookSpec] = []
    public var arrival: [HookSpec] = []
    public var departure: [HookSpec] = []
    public var overspeed: [HookSpec] = []
    public var overspeedEnd: [HookSpec] = []
    /// `hooks.mode`: the mode changed (`modes:`).
    public var mode: [HookSpec] = []
    public var heartbeat: [HookSpec] = []
    public var heartbeatEvery: Duration = .seconds(1800)
    public var retry: RetrySettings = RetrySettings()
    public init() {}

    public func hooks(for kind: EventKind) -> [HookSpec] { self[keyPath: Self.list(for: kind)] }

    /// Where the hooks of `kind` are kept (`hooks.<kind>`).
    public static func list(for kind: EventKind) -> WritableKeyPath<HookSettings, [HookSpec]> {
        switch kind {
        case .enter: \.enter
        case .exit: \.exit
        case .dwell: \.dwell
        case .location: \.location
        case .approach: \.approach
        case .moving: \.moving
        case .still: \.still
        case .tripStart: \.tripStart
        case .tripEnd: \.tripEnd
        case .arrival: \.arrival
        case .departure: \.departure
        case .overspeed: \.overspeed
        case .overspeedEnd: \.overspeedEnd
        case .mode: \.mode
        }
    }
}

public struct StorageSettings: Sendable {
    /// Database path; nil means the default `/var/lib/geomon/<name>.db`.
    public var path: String?
    public var keepFixes: Duration = .seconds(7 * 86400)
    public init() {}
}

/// A circle placed at run time where the device stands (`geomon fences here`, or the MQTT
/// command `placeFence`): the anchor watch. Stored in the database, merged after the profile's
/// fences and the pushed ones, monitored whether or not MQTT commands are on.
public struct PlacedFence: Hashable, Sendable {
    public var fenceID: String
    public var name: String?
    public var center: Coordinate
    public var radiusMeters: Double
    public var placedAt: UTCTime
    /// Who placed it: `geomon fences here`, or `MQTT command N`.
    public var placedBy: String

    public init(fenceID: String, name: String?, center: Coordinate, radiusMeters: Double, placedAt: UTCTime, placedBy: String) {
        self.fenceID = fenceID
        self.name = name
        self.center = center
        self.radiusMeters = radiusMeters
        self.placedAt = placedAt
        self.placedBy = placedBy
    }

    /// "placed 2026-12-05T15:00:00Z by geomon fences here".
    public var origin: String { "placed \(placedAt.rfc3339) by \(placedBy)" }

    /// The fence it is (enter and exit).
    public var fence: Fence {
        var fence = Fence(id: fenceID, name: name, shape: .circle(center: center, radiusMeters: radiusMeters))
        fence.pushed = origin
        return fence
    }
}

/// A fence a server pushed over MQTT (an OwnTracks `setWaypoints` waypoint), as stored: kept
/// apart from the profile's own fences, merged with them at every load.
public struct PushedFence: Hashable, Sendable {
    /// The waypoint's identity, as the apps merge by it: `rid:…` when the waypoint has a `rid`,
    /// else `tst:…`, else `desc:…`.
    public var key: String
    public var fenceID: String
    public var name: String?
    public var center: Coordinate
    public var radiusMeters: Double
    public var pushedAt: UTCTime
    /// The stored command that set it (`geomon events` lists it).
    public var command: Int64
    /// The waypoint's `tst` as the server sent it (`Fence.waypointTime`).
    public var waypointTime: Int64?

    public init(key: String, fenceID: String, name: String?, center: Coordinate, radiusMeters: Double, pushedAt: UTCTime, command: Int64,
                waypointTime: Int64? = nil) {
        self.waypointTime = waypointTime
        self.key = key
        self.fenceID = fenceID
        self.name = name
        self.center = center
        self.radiusMeters = radiusMeters
        self.pushedAt = pushedAt
        self.command = command
    }

    /// "pushed 2026-12-03T15:00:00Z by command 12".
    public var origin: String { "pushed \(pushedAt.rfc3339) by command \(command)" }

    /// The fence it is (enter and exit).
    public var fence: Fence {
        var fence = Fence(id: fenceID, name: name, shape: .circle(center: center, radiusMeters: radiusMeters))
        fence.pushed = origin
        fence.waypointTime = waypointTime
        return fence
    }
}
