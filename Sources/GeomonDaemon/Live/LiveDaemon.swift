#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonConfig
public import GeomonStore
public import GeomonSources
import GeomonHooks
import GeomonPublish
import GeomonGeoClue
import GeomonFormat
import FoundationEssentials

/// `geomon run`: the driver with a `LiveClock` and the live services, assembled from a
/// profile — the signal pipe, gpsd, the coarse source, hook deliveries, heartbeats, MQTT,
/// events on stdout and in the log, and systemd (started last: `READY=1` once the others run;
/// stopped first: `STOPPING=1`).
///
/// With the receiver off and nothing scheduled the driver sleeps in the kernel without a
/// timeout: an idle daemon makes no wake-ups and writes nothing (the watchdog, when systemd asks
/// for one, is the only periodic timer).
public final class LiveDaemon {
    /// Exit codes `run` returns.
    public enum Exit {
        public static let ok: Int32 = 0
        public static let failure: Int32 = 1
        public static let invalidProfile: Int32 = 65
        public static let noInput: Int32 = 66
    }

    public let options: RunOptions
    public let driver: MonitorDriver
    public let store: EventStore
    private let log: Log
    private let lock: InstanceLock
    private let hooks: HookService
    private let heartbeat: HeartbeatService?


    /// Opens everything `run` needs; throws `LiveDaemonError` with the exit code to use.
    /// - Parameters:
    ///   - clock: the host's clocks (a `ManualClock` in tests).
    ///   - gnss: the GNSS feed; nil: gpsd at the profile's (or `--gpsd`'s) endpoint.
    public init(options: RunOptions, log: Log, clock host: any HostClock = SystemHostClock(), gnss feed: (any GNSSFeed)? = nil) throws(LiveDaemonError) {
        self.options = options
        self.log = log
        var profile: Profile
        do {
            profile = try loadProfile(path: options.profilePath, insecurePermissions: options.insecurePermissions, warn: { [options] warnings in
                log.notice(warnings.summary(profilePath: options.profilePath))
            })
        } catch {
            throw LiveDaemonError(message: error.commandLineText, exitCode: error.isMissing ? Exit.noInput : Exit.invalidProfile)
        }
        let databasePath = options.databasePath ?? profile.storage.path ?? "/var/lib/geomon/\(profile.name).db"
        let directory = directoryPart(of: databasePath)
        do {
            try makeDirectories(directory)
        } catch {
            throw LiveDaemonError(message: "cannot create the database directory \(directory): \(error.reason)", exitCode: Exit.failure)
        }
        // No other file taken for the database: refused before a warning about its mode or a
        // lock file beside it.
        do {
            try EventStore.checkIsNoOtherFile(path: databasePath)
        } catch {
            throw LiveDaemonError(message: "\(error)", exitCode: Exit.failure)
        }
        if let problem = DatabaseTrust.problem(path: databasePath, insecurePermissions: options.insecurePermissions) {
            throw LiveDaemonError(message: problem, exitCode: Exit.failure)
        }
        if let exposure = DatabaseTrust.exposure(path: databasePath) { log.warning(exposure) }
        do {
            lock = try DatabaseTrust.lock(databasePath: databasePath)
        } catch {
            throw LiveDaemonError(message: error.message, exitCode: Exit.failure)
        }
        let journal: Journal
        let ownTracks: OwnTracksOutbox
        do {
            store = try EventStore(path: databasePath, keepFixes: profile.storage.keepFixes, syncEventCommits: true)
            profile = try withPushedFences(profile, store: store, log: log)
            ownTracks = OwnTracksOutbox(profile: profile, store: store)
            journal = try Journal(profile: profile, store: store, outboxes: [HookOutbox(profile: profile), ownTracks])
        } catch let error as SQLiteError {
            throw LiveDaemonError(message: DatabaseTrust.writeFailure(path: databasePath, error), exitCode: Exit.failure)
        } catch {
            throw LiveDaemonError(message: "\(error)", exitCode: Exit.failure)
        }
        do {
            let completions = try CompletionService()
            hooks = HookService(profile: profile, store: store, completions: completions, environment: options.environment)
            heartbeat = profile.hooks.heartbeat.isEmpty ? nil : HeartbeatService(profile: profile, completions: completions) { profile, wake in
                Self.makeHeartbeat(profile: profile, options: options, startedAt: host.wall, log: log, wake: wake)
            }
            var services: [any Service] = [try SignalService(log: log), completions]
            if let gnss = profile.sources.gnss {
                let endpoint = options.gpsdOverride ?? (gnss.host, gnss.port)
                let service = GNSSService(feed: feed ?? GPSDSource(host: endpoint.host, port: String(endpoint.port)), device: gnss.device, power: gnss.power,
                                              directory: profile.directory, completions: completions, log: log)
                // Listed first, it stops last: the GNSS service's last switch is waited for.
                if let switcher = service.switcher { services.append(switcher) }
                services.append(service)
            }
            // The supply for `modes:` (idle without them, until a reload brings some): the
            // uevent socket and, listed with it, the directory's inotify watch.
            let supply = PowerSupplyService(directory: options.powerSupplyDirectory, log: log, storedCapacity: journal.snapshot.mode?.supply?.capacity)
            services.append(supply)
            services.append(supply.files)
            // The sources the profile decides, rebuilt when a reload changes their settings.
            let home = options.environment["HOME"]
            services.append(SourceSlot(name: "motion", profile: profile, identity: { $0.sources.motion.map { "\($0)" } },
                                       build: { $0.sources.motion.flatMap { Self.motionService($0, home: home, log: log) } },
                                       replaced: { driver, _, sensor in
                                           // Another sensor, or none: the new machine forgets the old one's word.
                                           driver.emit(.motion(nil))
                                           driver.emit(.activity(nil))
                                           if sensor == nil { driver.updateStatus(\.motion, nil) }
                                       }))
            // The status' coarse entry is cleared only when the profile has no coarse source at
            // all (a move from GeoClue to a command leaves it to the command's service).
            let coarseGone: (DriverContext, Profile, (any EventSource & EffectSink)?) -> Void = { driver, profile, _ in
                if profile.sources.coarse.map({ $0.exec.isEmpty && $0.geoclue == nil }) ?? true { driver.updateStatus(\.coarse, nil) }
            }
            services.append(SourceSlot(name: "coarse-command", profile: profile,
                                       identity: { p in p.sources.coarse.flatMap { $0.exec.isEmpty ? nil : "\($0.exec)\t\($0.interval)" } },
                                       build: { p in p.sources.coarse.map { settings in
                                           CoarseCommandService(command: CommandSource(arguments: settings.exec, restartInterval: settings.interval, home: home), log: log)
                                       } },
                                       replaced: coarseGone))
            services.append(SourceSlot(name: "geoclue", profile: profile, identity: { $0.sources.coarse?.geoclue.map { "\($0)" } },
                                       build: { p in p.sources.coarse?.geoclue.map { settings in
                                           var g = GeoClueSource.Settings()
                                           g.level = settings.accuracy
                                           g.desktopID = settings.desktopID
                                           g.distanceThresholdMeters = UInt32(clamping: Int(settings.distanceThresholdMeters.rounded()))
                                           g.timeThresholdSeconds = UInt32(clamping: settings.timeThreshold.components.seconds)
                                           g.agent = settings.agent
                                           return GeoClueService(source: GeoClueSource(settings: g), log: log)
                                       } },
                                       replaced: coarseGone))
            services.append(EventReporter(output: options.printEvents ? .json : .none, log: log))
            services.append(hooks)
            if let heartbeat { services.append(heartbeat) }
            services.append(MQTTService(profile: profile, store: store, outbox: ownTracks, log: log, powerSupply: options.powerSupplyDirectory, acceptsCommands: true))
            services.append(StartupPagesService(log: log))
            if let limit = options.exitAfterSeconds { services.append(StopTimerService(after: .milliseconds(Int64(limit * 1000)), log: log)) }
            services.append(SystemdService(environment: options.environment))
            var configuration = PowerConfiguration(profile: profile)
            configuration.alwaysOn = options.alwaysOn
            var machine = Monitor(profile: profile, snapshot: journal.snapshot, configuration: configuration)
            machine.forgetMotionSourceWord()
            driver = MonitorDriver(machine: machine, journal: journal, clock: LiveClock(host: host), services: services, log: log)
        } catch {
            throw LiveDaemonError(message: "\(error)", exitCode: Exit.failure)
        }
        driver.commit(at: .live)
        driver.writesStatus = true
        driver.commitRetry = .seconds(5)
        driver.reloader = { [options, log, store] context in
            log.notice("reloading profile", ["profile.path": options.profilePath])
            let next: Profile
            do {
                next = try withPushedFences(try loadProfile(path: options.profilePath, insecurePermissions: options.insecurePermissions, warn: { warnings in
                    log.info(warnings.summary(profilePath: options.profilePath))
                }), store: store, log: log)
            } catch {
                // One line per error (`path:line:column: error: …`), not the rendered snippet
                // and its caret as lines of their own.
                if let failure = error as? ProfileLoadError {
                    for diagnostic in failure.diagnostics where diagnostic.severity == .error { log.error(diagnostic.description) }
                    log.error("reload failed; keeping the running profile", ["profile": context.profile.name, "reason": failure.message])
                } else {
                    log.error("reload failed; keeping the running profile", ["profile": context.profile.name, "reason": "\(error)"])
                }
                throw error
            }
            guard next.name == context.profile.name else {
                log.error("reload failed: the profile name changed; restart geomon for a new database", ["profile": context.profile.name, "new": next.name])
                throw DriverError("the profile name changed")
            }
            log.notice("profile reloaded", ["profile": next.name, "fences": "\(next.fences.count)"])
            return next
        }
        let status = driver.context
        status.status.running = true
        status.status.pid = Int(getpid())
        status.status.profile = profile.name
        status.status.profileFences = profile.fences.filter { $0.pushed == nil }.map(\.id)
        status.status.mode = profile.mode.rawValue
    }

    private static func makeHeartbeat(profile: Profile, options: RunOptions, startedAt: UTCTime, log: Log, wake: @escaping @Sendable () -> Void) -> HeartbeatDriver {
        let driver = HeartbeatDriver(
            settings: profile.hooks, profileName: profile.name,
            profileDirectory: HookTargets.absoluteDirectory(profile.directory), startedAt: startedAt,
            home: options.environment["HOME"], onActivity: wake)
        driver.onResult = { result in
            log.info("heartbeat hook finished", ["hook.key": result.hookKey, "hook.result": result.result.summary])
        }
        return driver
    }

    /// Logs each recorded hook attempt, and what the hook printed (bounded).
    private static func logOutcome(_ outcome: DeliveryWorker.Outcome, log: Log) {
        let command = outcome.delivery.argv.joined(separator: " ")
        let metadata: KeyValuePairs<String, String> = [
            "hook.cmd": command, "event.id": outcome.delivery.eventID,
            "hook.attempt": "\(outcome.attempt)", "hook.result": outcome.result.summary,
        ]
        switch outcome.decision {
        case .delivered: log.info("hook delivered", metadata)
        case .retry: log.warning("hook failed, will retry", metadata)
        case .dead: log.error("hook failed for the last time, dead-lettered", metadata)
        case .interrupted: log.notice("hook stopped with geomon; it runs again after the restart", metadata)
        }
        // What the hook printed goes to the log (under systemd: the journal), bounded.
        for (stream, bytes) in [("stdout", outcome.result.stdout), ("stderr", outcome.result.stderr)] where !bytes.isEmpty {
            for line in OutputText.excerpt(bytes) {
                log.info("hook output", ["hook.cmd": command, "event.id": outcome.delivery.eventID, "hook.stream": stream, "line": line])
            }
        }
    }

    /// The database this instance owns.
    public var database: String { store.path }
    public var eventStore: EventStore { store }
    /// The decision machine as it stands (tests).
    public var machine: Monitor { driver.machine }
    /// What `geomon status` shows of the daemon (as last updated).
    public var runtimeStatus: RuntimeStatus { driver.context.status }
    public var profile: Profile { driver.profile }
    public var now: UTCTime { driver.clock.now }

    // MARK: - Running

    /// Runs until SIGTERM/SIGINT (or `--exit-after`); returns the exit code.
    public func run() -> Int32 {
        do {
            try begin()
            while try driver.step() != .finished {}
            return finish(code: Exit.ok)
        } catch {
            log.error("stopping after an error", ["error": "\(error)"])
            return finish(code: Exit.failure)
        }
    }

    /// Starts the services and the machine (`run` calls it; tests on a `ManualClock` too).
    public func begin() throws {
        guard !driver.started else { return }
        hooks.onOutcome = { [log] outcome in Self.logOutcome(outcome, log: log) }
        log.notice("geomon started", [
            "profile": profile.name, "mode": profile.mode.rawValue, "fences": "\(profile.fences.count)",
            "db": store.path, "pid": "\(getpid())",
        ])
        try driver.start()
        try driver.flush()
    }

    /// Steps until nothing is ready now (a `ManualClock`: after advancing it). Returns false
    /// once the daemon stopped.
    @discardableResult
    public func runUntilIdle() throws -> Bool {
        try driver.runUntilIdle()
    }

    /// Asks the loop to stop (as SIGTERM does).
    public func requestStop() { driver.requestStop() }

    /// Asks the loop to reload the profile (as SIGHUP does).
    public func requestReload() { driver.requestReload() }

    /// Waits (in real time, at most `timeout`) until running hooks finish, recording them.
    public func waitForHooks(timeout: Duration) {
        hooks.waitForHooks(timeout: timeout, driver.context)
        heartbeat?.waitForBeats(timeout: timeout, driver.context)
    }

    /// Hook deliveries running now.
    public var hooksRunning: Int { hooks.runningCount }

    /// Connection attempts to gpsd (the first one included).
    public var gpsdAttempts: Int {
        driver.services.lazy.compactMap { $0 as? GNSSService }.first?.attempts ?? 0
    }

    /// Every effect of the machine, after the daemon performed it (tests, diagnostics).
    public var onEffect: ((Monitor.Effect, UTCTime) -> Void)? {
        get { driver.onEffect }
        set { driver.onEffect = newValue }
    }

    /// The monotonic instant at which the daemon's clock reaches `time`.
    public func monotonic(at time: UTCTime) -> Int64 { driver.clock.monotonic(at: time) }

    /// The monotonic instant the loop will next wake without input (the earliest service
    /// timer or machine deadline); nil when it would sleep until input.
    public var nextWake: Int64? {
        var wake = driver.machine.nextDeadline.map { driver.clock.monotonic(at: $0) }
        for case let service as any EventSource in driver.services where service.wakeClock == .driver {
            if let at = service.nextWake { wake = min(wake ?? at, at) }
        }
        return wake
    }

    /// Stops the services (in reverse start order), commits; returns `code`.
    public func finish(code: Int32) -> Int32 {
        driver.stop()
        log.notice("geomon stopped", ["exit_code": "\(code)"])
        return code
    }

    /// The motion sensor's service, or nil (logged) when its accelerometer cannot be opened:
    /// the policy then goes on as without one.
    static func motionService(_ settings: MotionSourceSettings, home: String?, log: Log) -> MotionService? {
        guard settings.plugin == .iio else { return MotionService(settings: settings, accelerometer: nil, home: home, log: log) }
        guard let directory = settings.device ?? IIOAccelerometer.find() else {
            log.warning("motion sensor: no IIO accelerometer (no \(IIOAccelerometer.devices)/iio:deviceN with in_accel_x_raw); the policy goes on as without one")
            return nil
        }
        do {
            return MotionService(settings: settings, accelerometer: try IIOAccelerometer(directory: directory), home: home, log: log)
        } catch {
            log.warning("motion sensor: \(error.description); the policy goes on as without one")
            return nil
        }
    }
}

/// Why `run` could not start, with the exit code to use.
public struct LiveDaemonError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var exitCode: Int32
    public var description: String { message }

}
