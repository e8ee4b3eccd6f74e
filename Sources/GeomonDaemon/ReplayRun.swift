public import GeomonCore
import GeomonFormat

public import GeomonEvaluation
public import GeomonPictures

/// One `geomon replay`: the driver on a virtual clock with the receiver model as its source,
/// over a recording; with `--compare-always-on`, a second driver with the receiver forced on
/// (not stored), and how the two compare.
///
/// The policy decides when the receiver is on, the receiver model delivers only the fixes a
/// real receiver would have produced (TTFF, interpolation across short gaps, nothing while off),
/// and the machine decides from those fixes: the events printed, stored and reported are that
/// one run's.
public final class ReplayRun {
    public struct Options: Sendable {
        /// Force the receiver on (`--always-on`).
        public var alwaysOn = false
        /// Also run always-on and compare (`--compare-always-on`).
        public var compareAlwaysOn = false
        /// A recorded coarse track (`--coarse FILE`); nil derives coarse fixes from the track.
        public var coarse: [Fix]?
        /// Seed of the derived coarse fixes' degradation (`--seed`).
        public var seed: UInt64 = 1
        /// The receiver model's longest gap bridged by interpolation (`--interpolate-gaps`).
        public var interpolationMaxGap: Duration = .seconds(60)
        /// The modelled receiver's tracking interval (`--tracking-interval`): while on, a fix
        /// at least this often, interpolated between recorded fixes (a receiver tracks at
        /// 1 Hz); nil: the recorded fixes only.
        public var trackingInterval: Duration? = .seconds(1)
        /// The modelled receiver's hot start (`--receiver-ttff-hot`): how long a wake within
        /// `hot_window` takes to its first fix; nil: the profile's `ttff_hot` (the receiver
        /// meets the plan). A receiver faster or slower than planned is what the policy
        /// measures (docs/power.md, "The time to first fix, measured"). A restart class other
        /// than hot makes every wake warm or cold: it then changes nothing.
        public var receiverTTFFHot: Duration?
        /// Derive a motion sensor from the recording (`--motion`); a profile with
        /// `sources.motion` gets one anyway.
        public var motion = false
        /// Where the activity comes from (`--activity`): the profile's `policy.activity`,
        /// another declared one, or sensed from the recording's speeds (`ActivitySignal`).
        public var activity: ActivityOption = .profile
        /// The power supply's readings (`--power-supply FILE`), in time order.
        public var supplies: [(time: UTCTime, reading: PowerSupplyReading)] = []
        public init() {}
    }

    public let profile: Profile
    public let options: Options
    public let index: FenceIndex
    public let configuration: PowerConfiguration
    /// The recording, read once per pass (the run, the derived coarse feed and motion sensor,
    /// the baseline, the oracle).
    public let recording: Recording
    /// The recorded fixes, sorted by time (stable), read into memory: for the picture and
    /// tests, not for the run.
    public var track: [Fix] { Array(recording.fixes()) }
    /// Keep every delivered fix (`delivered`: the policy log needs them).
    public var keepsDelivered = true
    /// Keep every action of the run's policy (`actions`: the policy log and the picture need
    /// them). The baseline keeps neither.
    public var keepsActions = true
    /// Keep the run's events (`events`: the picture needs them); a comparison with always-on
    /// keeps both runs' events whatever this says.
    public var keepsEvents = true
    /// The run's source after `run`: the receiver's accounting, actions, delivered fixes, events.
    public private(set) var source: ReceiverModelService?
    public private(set) var baseline: ReceiverModelService?
    public private(set) var match: EventMatch?
    public private(set) var oracle: OracleBound?
    /// Index lookups of the run.
    public private(set) var lookups = Monitor.Lookups()
    /// What the derived motion sensor said (`MotionSignal`), empty without one.
    public let motion: [MotionSignal.Change]
    /// The activities the derived source sensed (`--activity derive`), else empty.
    public let activities: [ActivitySignal.Change]

    /// `--activity`: `profile` (the default), a declared activity, `derive`, or a recording
    /// of what a motion source said (its changes, in time order).
    public enum ActivityOption: Hashable, Sendable {
        case profile
        case declared(Activity)
        case derive
        case recorded([ActivitySignal.Change])
    }

    /// Prepares a replay of `fixes` (in any order) with `profile`.
    public convenience init(profile: Profile, fixes: [Fix], options: Options) {
        self.init(profile: profile, recording: Recording(fixes: fixes), options: options)
    }

    /// Prepares a replay of `recording` with `profile`.
    public init(profile: Profile, recording: Recording, options: Options) {
        var profile = profile
        if case let .declared(activity) = options.activity { profile.policy.activity = activity }
        self.profile = profile
        self.options = options
        index = profile.makeIndex()
        self.recording = recording
        var configuration = PowerConfiguration(profile: profile)
        configuration.alwaysOn = options.alwaysOn
        self.configuration = configuration
        if options.motion || profile.sources.motion != nil {
            motion = MotionSignal(stillAfter: profile.sources.motion?.stillAfter ?? .seconds(60),
                                  movementGap: options.interpolationMaxGap).changes(recording.fixes())
        } else {
            motion = []
        }
        switch options.activity {
        case .derive:
            activities = ActivitySignal(latency: profile.sources.motion?.activityLatency ?? configuration.activityLatency).changes(recording.fixes())
        case let .recorded(changes):
            activities = changes
        case .profile, .declared:
            activities = []
        }
    }

    public var start: UTCTime? { recording.start }
    public var end: UTCTime? { recording.end }

    /// Runs the recording through a driver on a virtual clock whose journal (if any) stores
    /// it, with `services` beside the receiver model (hooks, MQTT, printing); `configure` sets
    /// the driver's observers before it starts. With `compareAlwaysOn`, the baseline's driver
    /// runs side by side with it (whichever is behind in virtual time steps next) over the same
    /// one reading of the recording, which also counts the oracle's crossings.
    /// - Parameter speed: play `speed` times real time (`--speed`); nil as fast as possible.
    public func run(journal: Journal?, services: [any Service] = [], speed: Double? = nil, log: Log = Log(level: .error),
                    configure: (MonitorDriver, ReceiverModelService) -> Void = { _, _ in }) throws {
        guard let start, let end else { return }
        // Every consumer's reader before the first fix is read: the run's, then the baseline's.
        // One consumer alone reads the recording itself.
        let runs = options.compareAlwaysOn ? 2 : 1
        let shared = derivesCoarse || runs > 1
        let reading = SharedReading(shared ? recording.fixes() : FixFeed([]))
        let feeds = shared
            ? (0..<runs).map { _ in (track: reading.reader(), coarse: coarseFixes(reading: reading)) }
            : [(track: recording.fixes(), coarse: coarseFixes(reading: reading))]
        let source = makeSource(configuration, feeds: feeds[0], start: start, end: end, keepsHistory: true, shared: shared)
        let machine = Monitor(profile: profile, index: index, configuration: configuration)
        source.startMode(machine.mode?.name ?? ModeRule.fallbackName)
        let clock = VirtualClock(start: start, speed: speed)
        clock.unpacedThrough = journal?.lastCommittedFixTime
        let sensor: [any Service] = motion.isEmpty && activities.isEmpty && options.supplies.isEmpty
            ? [] : [RecordedInputsService(changes: motion, activities: activities, supplies: options.supplies)]
        let driver = MonitorDriver(machine: machine, journal: journal, clock: clock, services: [source] + sensor + services, log: log)
        driver.decideUntil = end
        configure(driver, source)
        var drivers = [driver]
        var baselineSource: ReceiverModelService?
        var crossings: OracleBound.Counter?
        if options.compareAlwaysOn {
            var forced = configuration
            forced.alwaysOn = true
            let forcedSource = makeSource(forced, feeds: feeds[1], start: start, end: end, keepsHistory: false, shared: true)
            let baselineDriver = MonitorDriver(machine: Monitor(profile: profile, index: index, configuration: forced), journal: nil,
                                               clock: VirtualClock(start: start), services: [forcedSource], log: log)
            baselineDriver.decideUntil = end
            drivers.append(baselineDriver)
            baselineSource = forcedSource
            crossings = OracleBound.Counter(index: index)
            reading.onRead = { crossings?.add($0) }
        }
        try Self.runSideBySide(drivers)
        self.source = source
        lookups = driver.machine.lookups
        mostHeld = reading.mostHeld
        guard let baselineSource, let crossings else { return }
        baseline = baselineSource
        match = EventMatch(baseline: baselineSource.receiver.events, candidate: source.receiver.events, window: configuration.maxSleep)
        oracle = OracleBound(crossings, settings: receiverSettings)
    }

    /// The most recorded fixes the shared reading held at once (what lay between its slowest
    /// and fastest consumer).
    public private(set) var mostHeld = 0

    /// Runs `drivers` to their ends in one thread, always stepping the one whose clock is
    /// furthest behind (the first at equal times); on an error, stops them all without committing.
    private static func runSideBySide(_ drivers: [MonitorDriver]) throws {
        do {
            for driver in drivers { try driver.start() }
            var running = drivers
            while !running.isEmpty {
                var next = 0
                for k in running.indices.dropFirst() where running[k].clock.now < running[next].clock.now { next = k }
                if try running[next].step() == .finished { running.remove(at: next) }
            }
        } catch {
            for driver in drivers { driver.stop(committing: false) }
            throw error
        }
        for driver in drivers { driver.stop() }
    }

    private func makeSource(_ configuration: PowerConfiguration, feeds: (track: FixFeed, coarse: FixFeed), start: UTCTime,
                            end: UTCTime, keepsHistory: Bool, shared: Bool) -> ReceiverModelService {
        var receiver = ReplayReceiver(track: feeds.track, coarse: feeds.coarse, settings: receiverSettings,
                                      interpolationMaxGap: options.interpolationMaxGap, configuration: configuration,
                                      powerMethod: profile.powerMethod, restart: profile.restartClass,
                                      trackingInterval: options.trackingInterval)
        receiver.keepsDelivered = keepsHistory && keepsDelivered
        receiver.keepsActions = keepsHistory && keepsActions
        receiver.keepsEvents = keepsEvents || options.compareAlwaysOn
        let service = ReceiverModelService(receiver: receiver, start: start, end: end)
        service.catchUpEvery = shared ? Self.catchUpEvery : nil
        return service
    }

    /// The modelled receiver's figures: the profile's (`Profile.receiver`, as its restart class
    /// makes them), with `receiverTTFFHot` for its hot starts.
    var receiverSettings: ReceiverSettings {
        var settings = profile.receiver
        if let hot = options.receiverTTFFHot, profile.restartClass == .hot { settings.ttffHot = hot }
        return settings
    }

    /// How often a sleeping receiver model catches up with its clock (the reading then holds
    /// at most about this much of the recording for it).
    static let catchUpEvery: Duration = .seconds(60)

    /// The energy figures of the run (and of the baseline).
    public var report: EnergyReport? {
        source.map { $0.receiver.report(trackSeconds: trackSeconds) }
    }

    public var baselineReport: EnergyReport? {
        baseline.map { $0.receiver.report(trackSeconds: trackSeconds) }
    }

    public var trackSeconds: Double {
        guard let start, let end else { return 0 }
        return (end - start).secondsValue
    }

    /// Every event of the run, in decision order (the whole recording, a resumed prefix included).
    public var events: [GeoEvent] { source?.receiver.events ?? [] }

    /// The always-on baseline's events (with `compareAlwaysOn`).
    public var baselineEvents: [GeoEvent]? { baseline?.receiver.events }

    /// The policy's actions with their times.
    public var actions: [ReplayReceiver.TimedAction] { source?.receiver.actions ?? [] }

    /// Every fix the receiver model (and the coarse feed) delivered.
    public var delivered: [Fix] { source?.receiver.delivered ?? [] }

    /// Runs `fixes` with `profile` without storing anything (tests, evaluations).
    public static func evaluate(profile: Profile, fixes: [Fix], options: Options) throws -> ReplayRun {
        let run = ReplayRun(profile: profile, fixes: fixes, options: options)
        try run.run(journal: nil)
        return run
    }

    /// Whether coarse fixes are derived from the recording (a second reader of it).
    private var derivesCoarse: Bool {
        options.coarse == nil && (profile.sources.coarse != nil || profile.mode == .significantChange)
    }

    /// Coarse fixes: the recorded coarse track, else (when the profile has a coarse source or
    /// runs significant-change) derived every `sources.coarse.interval` (GeoClue: scattered as
    /// GeoClue scatters its answers at the level, `GeoClueSettings.Accuracy.scatterMeters`) with the documented
    /// seeded degradation (`CoarseFixGenerator`; none inside an outage of the receiver model),
    /// else none.
    func coarseFixes(reading: SharedReading) -> FixFeed {
        if let recorded = options.coarse {
            return FixFeed(recorded.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map {
                var fix = $0.element
                fix.source = .coarse
                return fix
            })
        }
        guard derivesCoarse, let start, let end else { return FixFeed([]) }
        let settings = profile.sources.coarse ?? CoarseSourceSettings()
        // Made at the first ask (it reads its first fixes then), after every reader exists.
        let track = reading.reader()
        let seed = options.seed, maxGap = options.interpolationMaxGap
        var derived: CoarseFixGenerator?
        return FixFeed {
            if derived == nil {
                derived = CoarseFixGenerator(track: track, start: start, end: end, interval: settings.interval,
                                             accuracyMeters: settings.expectedAccuracyMeters,
                                             offsetMeters: settings.geoclue?.accuracy.scatterMeters, maxGap: maxGap, seed: seed)
            }
            return derived?.next()
        }
    }

    /// The receiver's intervals from the policy's actions: acquiring from switch-on to the
    /// first delivered GNSS fix, on until switch-off, off in between; each with its reason.
    public var receiverIntervals: [RunPicture.ReceiverInterval] {
        guard let receiver = source?.receiver, let start, let end else { return [] }
        let switches = receiver.actions.compactMap { timed -> ReceiverSwitch? in
            switch timed.action {
            case let .gnssOn(reason): ReceiverSwitch(time: timed.time, on: true, reason: reason.text)
            case let .gnssOff(reason): ReceiverSwitch(time: timed.time, on: false, reason: reason.text)
            case .wakeAt, .coarseOn, .coarseOff: nil
            }
        }
        return ReplayPicture.intervals(switches: switches, gnssFixTimes: receiver.firstFixTimes, start: start, end: end)
    }
}

