#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
public import GeomonStore
public import GeomonSources
import GeomonHooks
import GeomonPublish
import GeomonGeoClue
import GeomonFormat
import Foundation

/// `geomon run`: the driver with the system clock, gpsd and the coarse command.
///
/// It is the driver's `MonitorSource`: one thread, one `poll(2)` on the gpsd socket, the
/// coarse command's pipe and the wake-up pipe (signals, hook completions), with a timeout to
/// the earliest of the machine's deadline and the host's timers. The host's timers — gpsd
/// reconnect, coarse restart, hook deliveries, heartbeat, the batched commit, the systemd
/// watchdog, `--exit-after` — are one `DeadlineQueue` on one injected `HostClock`. With the
/// receiver off and nothing scheduled the loop sleeps in the kernel without a timeout: an idle
/// daemon makes no wake-ups and writes nothing (the watchdog, when systemd asks for one, is
/// the only periodic timer).
public final class LiveDaemon: MonitorSource {
    /// Exit codes `run` returns.
    public enum Exit {
        public static let ok: Int32 = 0
        public static let failure: Int32 = 1
        public static let invalidProfile: Int32 = 65
        public static let noInput: Int32 = 66
    }

    /// The host's timers.
    enum Timer: Hashable, Sendable {
        case gpsdReconnect, gpsdEpoch, coarseRestart, deliveries, heartbeat, flush, watchdog, exitAfter, publish, geoclue
    }

    let options: RunOptions
    let log: Log
    public private(set) var profile: Profile
    private let host: any HostClock
    private var clock: DaemonClock
    private let store: EventStore
    private let journal: Journal
    private let driver: MonitorDriver
    private let loop: EventLoop
    private let lock: InstanceLock
    private let notifier: SystemdNotifier
    private let databasePath: String
    private var timers = DeadlineQueue<Timer>()
    private var pendingFixes: [Fix] = []
    private var pendingFixIndex = 0

    private var gpsd: (any GNSSFeed)?
    private var gpsdWatchedFD: Int32?
    private var coarse: CommandSource?
    private var coarseWatchedFD: Int32?
    private var coarseWanted = false
    /// `plugin: geoclue`: the GeoClue2 client on the system bus, served by the loop.
    private var geoclue: GeoClueSource?
    private var geoclueWatch: (fd: Int32, events: Int16)?

    private var receiverOn = false
    private var receiverReason = "starting"
    private var lastFix: Fix?
    private var stopRequested = false
    private var reloadRequested = false
    private var statusDirty = true
    private var started = false
    private let startedMicros: Int64
    /// Times the loop woke from `poll(2)`.
    public private(set) var wakeups = 0
    /// Connection attempts to gpsd (the first one included).
    public private(set) var gpsdAttempts = 0

    /// Hook deliveries from the store, on real processes; retry times are wall-clock times.
    private var worker: DeliveryWorker
    private var heartbeat: HeartbeatDriver?
    /// The MQTT publisher (`publish.mqtt`): messages from the store's outbox, on the loop.
    private var publisher: MQTTPublisher?
    private var publisherWatch: (fd: Int32, events: Int16)?

    /// How long fixes wait in the journal before they are committed (events never wait).
    static let flushDelay: Duration = .seconds(1)

    /// Opens everything `run` needs; throws `LiveDaemonError` with the exit code to use.
    /// - Parameters:
    ///   - clock: the host's clocks (a `ManualClock` in tests).
    ///   - gnss: the GNSS feed; nil: gpsd at the profile's (or `--gpsd`'s) endpoint.
    public init(options: RunOptions, log: Log, clock host: any HostClock = SystemHostClock(), gnss: (any GNSSFeed)? = nil) throws(LiveDaemonError) {
        self.options = options
        self.log = log
        self.host = host
        self.gpsd = gnss
        clock = DaemonClock(host: host)
        startedMicros = host.monotonicMicroseconds
        let profile: Profile
        do {
            profile = try loadProfile(path: options.profilePath, insecurePermissions: options.insecurePermissions, warn: { [options] warnings in
                for line in warnings.logLines(profilePath: options.profilePath) { log.warning(line) }
            })
        } catch {
            throw LiveDaemonError(message: error.description, exitCode: error.isMissing ? Exit.noInput : Exit.invalidProfile)
        }
        self.profile = profile
        databasePath = options.databasePath ?? profile.storage.path ?? "/var/lib/geomon/\(profile.name).db"
        let directory = (databasePath as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw LiveDaemonError(message: "cannot create the database directory \(directory): \(error.localizedDescription)", exitCode: Exit.failure)
            }
        }
        if let problem = DatabaseTrust.problem(path: databasePath, insecurePermissions: options.insecurePermissions) {
            throw LiveDaemonError(message: problem, exitCode: Exit.failure)
        }
        do {
            lock = try DatabaseTrust.lock(databasePath: databasePath)
        } catch {
            throw LiveDaemonError(message: error.message, exitCode: Exit.failure)
        }
        do {
            store = try EventStore(path: databasePath, keepFixes: profile.storage.keepFixes, syncEveryCommit: false)
            journal = try Journal(profile: profile, store: store)
        } catch let error as SQLiteError {
            throw LiveDaemonError(message: DatabaseTrust.writeFailure(path: databasePath, error), exitCode: Exit.failure)
        } catch {
            throw LiveDaemonError(message: "\(error)", exitCode: Exit.failure)
        }
        driver = MonitorDriver(machine: Self.machine(profile, journal.snapshot, options), journal: journal)
        do {
            loop = try EventLoop()
        } catch {
            throw LiveDaemonError(message: "\(error)", exitCode: Exit.failure)
        }
        notifier = SystemdNotifier(environment: options.environment)
        let wakeFD = loop.wakeWrite
        let wake: @Sendable () -> Void = { EventLoop.writeByte(wakeFD, 1) }
        do {
            worker = try Self.makeWorker(profile: profile, store: store, options: options, log: log, wake: wake)
        } catch {
            throw LiveDaemonError(message: "\(error)", exitCode: Exit.failure)
        }
        heartbeat = Self.makeHeartbeat(profile: profile, options: options, startedAt: host.wall, log: log, wake: wake)
        driver.onCommitted = { [unowned self] events, _ in self.committed(events) }
    }

    static func machine(_ profile: Profile, _ snapshot: EngineSnapshot, _ options: RunOptions) -> Monitor {
        var configuration = PowerConfiguration(profile: profile)
        configuration.alwaysOn = options.alwaysOn
        return Monitor(profile: profile, snapshot: snapshot, configuration: configuration)
    }

    private static func makeWorker(profile: Profile, store: EventStore, options: RunOptions, log: Log, wake: @escaping @Sendable () -> Void) throws -> DeliveryWorker {
        let settings = DeliveryWorker.Settings(
            profileName: profile.name, profileDirectory: HookTargets.absoluteDirectory(profile.directory),
            retry: profile.hooks.retry, home: options.environment["HOME"])
        let worker = DeliveryWorker(
            queue: store, settings: settings, catalog: HookCatalog(settings: profile.hooks),
            probe: .fromEnvironment(options.environment), onActivity: wake)
        worker.onOutcome = { outcome in
            let metadata: KeyValuePairs<String, String> = [
                "hook.cmd": outcome.delivery.argv.joined(separator: " "), "event.id": outcome.delivery.eventID,
                "hook.attempt": "\(outcome.attempt)", "hook.result": outcome.result.summary,
            ]
            switch outcome.decision {
            case .delivered: log.info("hook delivered", metadata)
            case .retry: log.warning("hook failed, will retry", metadata)
            case .dead: log.error("hook failed for the last time, dead-lettered", metadata)
            }
            // What the hook printed goes to the log (under systemd: the journal), bounded.
            for (stream, bytes) in [("stdout", outcome.result.stdout), ("stderr", outcome.result.stderr)] where !bytes.isEmpty {
                for line in OutputText.excerpt(bytes) {
                    log.info("hook output", ["hook.cmd": outcome.delivery.argv.joined(separator: " "), "event.id": outcome.delivery.eventID,
                                             "hook.stream": stream, "line": line])
                }
            }
        }
        try worker.recover()
        return worker
    }

    private static func makeHeartbeat(profile: Profile, options: RunOptions, startedAt: UTCTime, log: Log, wake: @escaping @Sendable () -> Void) -> HeartbeatDriver? {
        guard !profile.hooks.heartbeat.isEmpty else { return nil }
        let driver = HeartbeatDriver(
            settings: profile.hooks, profileName: profile.name,
            profileDirectory: HookTargets.absoluteDirectory(profile.directory), startedAt: startedAt,
            home: options.environment["HOME"], onActivity: wake)
        driver.onResult = { result in
            log.info("heartbeat hook finished", ["hook.key": result.hookKey, "hook.result": result.result.summary])
        }
        return driver
    }

    /// The database this instance owns.
    public var database: String { databasePath }
    public var eventStore: EventStore { store }
    /// The decision machine as it stands (tests).
    public var machine: Monitor { driver.machine }

    // MARK: - Running

    /// Runs until SIGTERM/SIGINT (or `exitAfterSeconds`); returns the exit code.
    public func run() -> Int32 {
        SignalForwarding.install(into: loop)
        defer { SignalForwarding.uninstall() }
        do {
            try begin()
            try driver.run(self)
            return finish(code: Exit.ok)
        } catch {
            log.error("stopping after an error", ["error": "\(error)"])
            return finish(code: Exit.failure)
        }
    }

    /// Starts the sources and the machine (`run` calls it; tests on a `ManualClock` too).
    public func begin() throws {
        guard !started else { return }
        started = true
        loop.onWake = { [weak self] bytes in self?.handleWake(bytes) }
        log.notice("geomon started", [
            "profile": profile.name, "mode": profile.mode.rawValue, "fences": "\(profile.fences.count)",
            "db": databasePath, "pid": "\(getpid())",
        ])
        setUpSources()
        try driver.start(self)
        try startPublisher()
        runDeliveries()
        runHeartbeat()
        if let interval = notifier.watchdogIntervalMilliseconds {
            timers.schedule(.watchdog, at: host.monotonicMicroseconds + interval * 1000)
        }
        if let limit = options.exitAfterSeconds {
            timers.schedule(.exitAfter, at: startedMicros + Int64(limit * 1_000_000))
        }
        notifier.ready(status: statusLine())
        scheduleFlush()
    }

    /// Steps until nothing is ready now (a `ManualClock`: after advancing it). Returns false
    /// once the daemon stopped.
    @discardableResult
    public func runUntilIdle() throws -> Bool {
        while true {
            switch try driver.step(self) {
            case .end: return false
            case .idle: return true
            case .other, .fix, .deadline: continue
            }
        }
    }

    /// Asks the loop to stop (as SIGTERM does).
    public func requestStop() {
        stopRequested = true
    }

    /// Asks the loop to reload the profile (as SIGHUP does).
    public func requestReload() {
        reloadRequested = true
    }

    /// Waits (in real time, at most `timeout`) until a running hook finishes, then records it.
    public func waitForHooks(timeout: Duration) {
        let end = ContinuousClock.now + timeout
        while worker.runningCount > 0 || (heartbeat?.runningCount ?? 0) > 0, ContinuousClock.now < end {
            worker.waitForActivity(timeout: .milliseconds(20))
            runDeliveries()
            runHeartbeat()
        }
    }

    /// Hook deliveries running now.
    public var hooksRunning: Int { worker.runningCount }

    /// Every effect of the machine, after the daemon performed it (tests, diagnostics).
    public var onEffect: ((Monitor.Effect, UTCTime) -> Void)? {
        get { driver.onEffect }
        set { driver.onEffect = newValue }
    }

    /// The monotonic instant at which the daemon's clock reaches `time`.
    public func monotonic(at time: UTCTime) -> Int64 { clock.monotonic(at: time) }

    /// The monotonic instant the loop will next wake without input (the earliest host timer
    /// or machine deadline); nil when it would sleep until input.
    public var nextWake: Int64? {
        var wake = timers.earliest
        if let deadline = driver.machine.nextDeadline {
            let at = clock.monotonic(at: deadline)
            wake = wake.map { min($0, at) } ?? at
        }
        return wake
    }

    // MARK: - MonitorSource

    public var now: UTCTime { clock.now }

    public func next(until deadline: UTCTime?) throws -> MonitorInput {
        while true {
            if pendingFixIndex < pendingFixes.count {
                let fix = pendingFixes[pendingFixIndex]
                pendingFixIndex += 1
                if pendingFixIndex == pendingFixes.count {
                    pendingFixes.removeAll(keepingCapacity: true)
                    pendingFixIndex = 0
                }
                return .fix(fix)
            }
            if stopRequested { return .end }
            if reloadRequested {
                reloadRequested = false
                reload()
                return .other
            }
            if let deadline, clock.now >= deadline {
                // A fix already waiting at the deadline goes first (as in replay).
                loop.runOnce(timeoutMilliseconds: 0)
                if pendingFixIndex < pendingFixes.count { continue }
                return .deadline
            }
            let mono = host.monotonicMicroseconds
            let due = timers.popDue(now: mono)
            if !due.isEmpty {
                for timer in due { try fire(timer) }
                return .other
            }
            var wake = timers.earliest
            if let deadline {
                let at = clock.monotonic(at: deadline)
                wake = wake.map { min($0, at) } ?? at
            }
            // Round up to whole milliseconds: waking a little late is harmless, early is a spin.
            let timeout: Int64? = host.isManual ? 0 : wake.map { max(0, ($0 - mono + 999) / 1000) }
            let ready = loop.runOnce(timeoutMilliseconds: timeout)
            wakeups += 1
            if host.isManual, ready == 0, pendingFixes.isEmpty, !stopRequested, !reloadRequested {
                // Nothing ready on a manual clock: the test advances it.
                if let deadline, clock.now >= deadline { return .deadline }
                if timers.earliest.map({ $0 <= host.monotonicMicroseconds }) ?? false { continue }
                return .idle
            }
        }
    }

    public func observe(_ effect: Monitor.Effect, now: UTCTime) {
        switch effect {
        case let .power(action):
            log.info("power", ["power.action": action.text])
            switch action {
            case let .gnssOn(reason):
                receiverOn = true
                receiverReason = reason.text
                setWatch(true)
            case let .gnssOff(reason):
                receiverOn = false
                receiverReason = reason.text
                setWatch(false)
            case let .wakeAt(_, reason):
                receiverReason = reason.text
            case .coarseOn:
                setCoarse(true)
            case .coarseOff:
                setCoarse(false)
            }
            markStatusChanged()
        case let .held(fix):
            log.info("implausible jump held until confirmed", [
                "fix.lat": NumberText.short(fix.coordinate.latitude, 7), "fix.lon": NumberText.short(fix.coordinate.longitude, 7),
            ])
        case let .took(fix, _):
            lastFix = fix
            markStatusChanged()
        case .commit:
            scheduleFlush()
        case .dropped:
            break
        }
    }

    // MARK: - Timers

    private func fire(_ timer: Timer) throws {
        switch timer {
        case .gpsdReconnect:
            connectGPSD()
        case .gpsdEpoch:
            if let gpsd { handle(gpsdEvents: gpsd.flushPendingFix()) }
        case .coarseRestart:
            if coarseWanted { startCoarse() }
        case .deliveries:
            runDeliveries()
        case .heartbeat:
            runHeartbeat()
        case .flush:
            try flush()
        case .watchdog:
            notifier.watchdog()
            if let interval = notifier.watchdogIntervalMilliseconds {
                timers.schedule(.watchdog, at: host.monotonicMicroseconds + interval * 1000)
            }
        case .exitAfter:
            log.notice("exit-after reached")
            stopRequested = true
        case .publish:
            runPublisher()
        case .geoclue:
            runGeoClue()
        }
    }

    private func micros(after duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return host.monotonicMicroseconds + seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// The monotonic instant of a wall-clock time.
    private func micros(atWall time: UTCTime) -> Int64 {
        host.monotonicMicroseconds + (time.millisecondsSince1970 - host.wall.millisecondsSince1970) * 1000
    }

    private func markStatusChanged() {
        statusDirty = true
        scheduleFlush()
    }

    private func scheduleFlush() {
        timers.scheduleEarliest(.flush, at: micros(after: Self.flushDelay))
    }

    /// Commits the buffered fixes and, when it changed, the status.
    private func flush() throws {
        if statusDirty {
            statusDirty = false
            journal.setValue(statusJSON(running: true), forKey: "runtime_status")
        }
        try driver.flush(now: clock.now)
        if publisher != nil {
            publisher?.poke()
            runPublisher()
        }
    }

    // MARK: - Sources

    private func setUpSources() {
        if let gnss = profile.sources.gnss {
            if gpsd == nil {
                let endpoint = options.gpsdOverride ?? (gnss.host, gnss.port)
                gpsd = GPSDSource(host: endpoint.host, port: String(endpoint.port))
            }
            connectGPSD()
        }
        if let settings = profile.sources.coarse, !settings.exec.isEmpty {
            coarse = CommandSource(arguments: settings.exec, restartInterval: settings.interval)
        }
        if let settings = profile.sources.coarse?.geoclue {
            var g = GeoClueSource.Settings()
            g.level = settings.accuracy
            g.desktopID = settings.desktopID
            g.distanceThresholdMeters = UInt32(clamping: Int(settings.distanceThresholdMeters.rounded()))
            g.timeThresholdSeconds = UInt32(clamping: settings.timeThreshold.components.seconds)
            g.agent = settings.agent
            geoclue = GeoClueSource(settings: g)
        }
    }

    private func connectGPSD() {
        guard let gpsd else { return }
        gpsdAttempts += 1
        do {
            let events = try gpsd.connect()
            handle(gpsdEvents: events)
            if let fd = gpsd.fileDescriptor {
                gpsdWatchedFD = fd
                loop.watch(fd) { [weak self] _ in self?.readGPSD() }
            }
        } catch {
            let first = gpsd.backoff.failures == 0
            let delay = gpsd.backoff.failed()
            timers.schedule(.gpsdReconnect, at: micros(after: delay))
            if first {
                log.warning("gpsd unavailable, retrying", ["gpsd.endpoint": gpsd.endpoint, "error": error.message])
                markStatusChanged()
            } else {
                log.debug("gpsd still unavailable", ["gpsd.endpoint": gpsd.endpoint, "retry_ms": "\(delay.wholeMilliseconds)"])
            }
        }
    }

    private func readGPSD() {
        guard let gpsd else { return }
        handle(gpsdEvents: gpsd.readAvailable())
        // An epoch whose accuracy gpsd has not sent yet: taken as it is after the budget.
        if gpsd.hasPendingFix {
            timers.scheduleEarliest(.gpsdEpoch, at: micros(after: GPSDSource.epochBudget))
        } else {
            timers.cancel(.gpsdEpoch)
        }
    }

    private func handle(gpsdEvents events: [GPSDSource.Event]) {
        for event in events {
            switch event {
            case let .fix(fix):
                arrived(fix)
            case .stateChanged(.connected):
                log.notice("gpsd connected", ["gpsd.endpoint": gpsd?.endpoint ?? "-"])
                markStatusChanged()
            case let .stateChanged(.disconnected(reason)):
                log.warning("gpsd disconnected", ["gpsd.endpoint": gpsd?.endpoint ?? "-", "reason": reason])
                if let fd = gpsdWatchedFD { loop.unwatch(fd) }
                gpsdWatchedFD = nil
                let delay = gpsd?.backoff.failed() ?? .seconds(1)
                timers.schedule(.gpsdReconnect, at: micros(after: delay))
                markStatusChanged()
            }
        }
    }

    /// When the battery was last read (host monotonic µs).
    private var batteryReadAt: Int64?
    /// How often the battery is read for MQTT's `batt`/`bs` (only when the profile publishes).
    static let batteryInterval: Int64 = 60_000_000

    /// A fix from a source: queued for the machine; the clock anchors on fixes it will take.
    private func arrived(_ fix: Fix) {
        if journal.publishes, batteryReadAt.map({ host.monotonicMicroseconds - $0 >= Self.batteryInterval }) ?? true {
            batteryReadAt = host.monotonicMicroseconds
            journal.battery = PowerSupply.battery(in: options.powerSupplyDirectory)
        }
        if fix.source == .coarse || driver.machine.isReceiverOn, let shift = clock.fixArrived(fix.time) {
            journal.timeBaseMoved(by: shift)
            log.info("on the receiver's time", ["clock.shift_s": NumberText.short(shift.secondsValue, 3)])
        }
        pendingFixes.append(fix)
    }

    private func setCoarse(_ on: Bool) {
        coarseWanted = on
        if let geoclue {
            if on, !geoclue.isRunning {
                do {
                    try geoclue.start()
                    log.info("GeoClue client requested", ["geoclue.accuracy": geoclue.settings.level.rawValue])
                } catch {
                    log.error("GeoClue unavailable", ["error": error.message])
                }
                runGeoClue()
            } else if !on, geoclue.isRunning {
                geoclue.stop()
                runGeoClue()
            }
        }
        guard let coarse else { return }
        if on, !coarse.isRunning {
            startCoarse()
        } else if !on, coarse.isRunning {
            if let fd = coarseWatchedFD { loop.unwatch(fd) }
            coarseWatchedFD = nil
            coarse.stop()
            timers.cancel(.coarseRestart)
        }
    }

    private func startCoarse() {
        guard let coarse else { return }
        do {
            try coarse.start()
            timers.cancel(.coarseRestart)
            if let fd = coarse.fileDescriptor {
                coarseWatchedFD = fd
                loop.watch(fd) { [weak self] _ in self?.readCoarse() }
            }
            log.info("coarse source started", ["coarse.cmd": coarse.arguments.joined(separator: " ")])
        } catch {
            log.warning("coarse source failed to start", ["error": error.description])
            timers.schedule(.coarseRestart, at: micros(after: coarse.restartInterval))
        }
    }

    private func readCoarse() {
        guard let coarse else { return }
        let before = coarse.malformedLines
        for event in coarse.readAvailable() {
            switch event {
            case let .fix(fix):
                arrived(fix)
            case let .exited(status):
                if let fd = coarseWatchedFD { loop.unwatch(fd) }
                coarseWatchedFD = nil
                log.info("coarse source exited", ["exit_status": "\(status)", "restart_s": NumberText.short(coarse.restartInterval.secondsValue, 3)])
                if coarseWanted { timers.schedule(.coarseRestart, at: micros(after: coarse.restartInterval)) }
            }
        }
        if coarse.malformedLines > before {
            log.warning("coarse source printed malformed lines", ["count": "\(coarse.malformedLines - before)", "error": coarse.lastError ?? "-"])
        }
    }

    /// Lets the GeoClue client handle what the bus has (or its timers), then watches its
    /// socket and schedules its next timeout.
    private func runGeoClue(revents: Int16 = 0) {
        guard let geoclue else { return }
        for event in geoclue.process() {
            switch event {
            case let .fix(fix):
                arrived(fix)
            case let .started(client):
                log.notice("GeoClue started", ["geoclue.client": client, "geoclue.accuracy": geoclue.settings.level.rawValue])
                markStatusChanged()
            case let .failed(reason, first, retry):
                if first {
                    log.error("GeoClue failed; retrying", ["error": reason, "retry_s": NumberText.short(retry.secondsValue, 1)])
                } else {
                    log.debug("GeoClue still failing", ["error": reason, "retry_s": NumberText.short(retry.secondsValue, 1)])
                }
                markStatusChanged()
            case .vanished:
                log.warning("GeoClue left the bus; asking for a new client")
                markStatusChanged()
            }
        }
        geoclueWatch = watch(geoclue.fileDescriptor, events: geoclue.pollEvents, current: geoclueWatch) { [weak self] revents in
            self?.runGeoClue(revents: revents)
        }
        if let at = geoclue.timeoutMicroseconds {
            // sd-bus's timeouts are CLOCK_MONOTONIC; the host clock's monotonic time is the same
            // clock on a real system (a manual clock in tests has no GeoClue).
            let now = GeoClueSource.monotonic()
            let delay = at > now ? Int64(at - now) : 0
            timers.schedule(.geoclue, at: host.monotonicMicroseconds + delay)
        } else {
            timers.cancel(.geoclue)
        }
    }

    private func setWatch(_ enabled: Bool) {
        guard let gpsd else { return }
        do {
            try gpsd.watch(enabled: enabled, device: profile.sources.gnss?.device)
        } catch {
            log.warning("cannot change the gpsd watch", ["error": error.message])
            handle(gpsdEvents: gpsd.disconnect(reason: error.message))
        }
    }

    // MARK: - Events and hooks

    private func committed(_ events: [StoredEvent]) {
        for stored in events {
            let event = stored.event
            log.notice("event", [
                "event.type": event.kind.rawValue, "fence.id": event.fenceID ?? "-", "event.id": event.id,
                "event.time": event.time.rfc3339, "event.rule": event.rule.text,
            ])
            if options.printEvents { writeStdout(EventEncoding.json(event) + "\n") }
        }
        markStatusChanged()
        runDeliveries()
        if publisher != nil {
            publisher?.poke()
            runPublisher()
        }
    }

    /// Records finished hooks and starts what is due (after commits, hook completions, retries).
    private func runDeliveries() {
        do {
            if let wake = try worker.poll(now: host.wall) {
                timers.schedule(.deliveries, at: micros(atWall: wake))
            } else {
                timers.cancel(.deliveries)
            }
        } catch {
            log.error("hook delivery failed to update the store", ["error": "\(error)"])
            timers.schedule(.deliveries, at: micros(after: .seconds(5)))
        }
    }

    /// Lets running hooks finish (recording their results) for at most `limit`.
    private func waitForRunningHooks(upTo limit: Duration) {
        let end = ContinuousClock.now + limit
        while worker.runningCount > 0, ContinuousClock.now < end {
            worker.waitForActivity(timeout: .milliseconds(100))
            _ = try? worker.poll(now: host.wall)
        }
    }

    private func runHeartbeat() {
        guard let heartbeat else { return }
        if let next = heartbeat.poll(now: host.wall, status: { statusJSON(running: true) }) {
            timers.schedule(.heartbeat, at: micros(atWall: next))
        } else {
            timers.cancel(.heartbeat)
        }
    }

    /// Watches an adapter's socket (which may change with every reconnect) for `events`;
    /// returns what is watched now.
    private func watch(_ fd: Int32?, events: Int16, current: (fd: Int32, events: Int16)?,
                       _ handler: @escaping EventLoop.Handler) -> (fd: Int32, events: Int16)? {
        guard let fd else {
            if let current { loop.unwatch(current.fd) }
            return nil
        }
        if current?.fd == fd, current?.events == events { return current }
        if let current, current.fd != fd { loop.unwatch(current.fd) }
        loop.watch(fd, events: events, handler)
        return (fd, events)
    }

    // MARK: - MQTT

    /// Queues the waypoints and starts (or keeps) the publisher when the profile publishes.
    private func startPublisher() throws {
        guard let mqtt = profile.publish.mqtt, journal.publishes else { return }
        journal.queueWaypoints(at: host.wall)
        try driver.flush(now: clock.now)
        if publisher == nil {
            let own = OwnTracks(settings: mqtt, profile: profile)
            let publisher = MQTTPublisher(settings: .init(settings: mqtt, profile: profile.name, statusTopic: own.statusTopic), outbox: store)
            let broker = "\(mqtt.host):\(mqtt.effectivePort)"
            publisher.onReport = { [log] report in
                switch report {
                case let .connected(pending, outage):
                    var metadata: KeyValuePairs<String, String> = ["mqtt.broker": broker, "pending": "\(pending)"]
                    if let outage { metadata = ["mqtt.broker": broker, "pending": "\(pending)", "outage_s": NumberText.short(outage, 1)] }
                    log.notice("MQTT connected", metadata)
                case let .unreachable(reason, retry):
                    log.warning("MQTT broker unavailable; messages wait in the database and go out in order when it is back",
                                ["mqtt.broker": broker, "error": reason, "retry_s": NumberText.short(retry.secondsValue, 1)])
                case let .retrying(reason, retry):
                    log.debug("MQTT broker still unavailable", ["mqtt.broker": broker, "error": reason, "retry_s": NumberText.short(retry.secondsValue, 1)])
                case let .storeFailed(error):
                    log.error("MQTT outbox failed", ["error": error])
                }
            }
            self.publisher = publisher
        }
        publisher?.poke()
        runPublisher()
    }

    private func stopPublisher() {
        guard let publisher else { return }
        if let watch = publisherWatch { loop.unwatch(watch.fd) }
        publisherWatch = nil
        timers.cancel(.publish)
        publisher.close(now: (host.wall, host.monotonicMicroseconds))
        self.publisher = nil
    }

    /// Lets the publisher do what is due (after input on its socket, a timer, a commit), then
    /// watches its socket for what it waits for and schedules its next step.
    private func runPublisher(revents: Int16 = 0) {
        guard let publisher else { return }
        let before = publisher.state
        let next = publisher.step(revents: revents, now: (host.wall, host.monotonicMicroseconds))
        if publisher.state != before { markStatusChanged() }
        publisherWatch = watch(publisher.fileDescriptor, events: publisher.pollEvents, current: publisherWatch) { [weak self] revents in
            self?.runPublisher(revents: revents)
        }
        timers.schedule(.publish, at: next)
    }

    // MARK: - Signals, reload, shutdown

    private func handleWake(_ bytes: [UInt8]) {
        var hooks = false
        for byte in bytes {
            switch byte {
            case SignalForwarding.byte(for: SIGTERM), SignalForwarding.byte(for: SIGINT):
                log.notice("stopping on signal")
                stopRequested = true
            case SignalForwarding.byte(for: SIGHUP):
                reloadRequested = true
            case SignalForwarding.byte(for: SIGUSR1):
                requeueDead()
            default:
                hooks = true
            }
        }
        if hooks {
            // A hook finished: let the worker record it and start what is next.
            runDeliveries()
            runHeartbeat()
        }
    }

    /// SIGUSR1 (`geomon hooks retry` while this daemon owns the database): dead deliveries go
    /// back in the queue and run now; this process stays the database's only writer.
    public func requeueDead() {
        do {
            let count = try store.requeueDead()
            log.notice("dead deliveries requeued", ["count": "\(count)"])
            runDeliveries()
            if let publisher {
                publisher.reconnectNow()
                publisher.poke()
                runPublisher()
            }
            markStatusChanged()
        } catch {
            log.error("cannot requeue dead deliveries", ["error": "\(error)"])
        }
    }

    /// SIGHUP: load and validate the profile again; on error keep the old one. Fences that
    /// remain keep their state (the machine continues from the store's state by fence id).
    private func reload() {
        log.notice("reloading profile", ["profile.path": options.profilePath])
        notifier.reloading()
        defer { notifier.ready(status: statusLine()) }
        let next: Profile
        do {
            next = try loadProfile(path: options.profilePath, insecurePermissions: options.insecurePermissions, warn: { [log, options] warnings in
                for line in warnings.logLines(profilePath: options.profilePath) { log.warning(line) }
            })
        } catch {
            for line in error.description.split(separator: "\n") { log.error(String(line)) }
            log.error("reload failed; keeping the running profile", ["profile": profile.name])
            return
        }
        guard next.name == profile.name else {
            log.error("reload failed: the profile name changed; restart geomon for a new database", ["profile": profile.name, "new": next.name])
            return
        }
        do {
            try driver.flush(now: clock.now)
            let snapshot = try store.loadSnapshot()
            let wakeFD = loop.wakeWrite
            let wake: @Sendable () -> Void = { EventLoop.writeByte(wakeFD, 1) }
            // Hooks already running finish and are recorded by the worker that started them.
            waitForRunningHooks(upTo: .seconds(60))
            worker = try Self.makeWorker(profile: next, store: store, options: options, log: log, wake: wake)
            heartbeat = Self.makeHeartbeat(profile: next, options: options, startedAt: host.wall, log: log, wake: wake)
            journal.reload(profile: next)
            let publishChanged = next.publish.mqtt != profile.publish.mqtt
            profile = next
            driver.replace(Self.machine(next, snapshot, options))
            try driver.start(self)
            if publishChanged { stopPublisher() }
            try startPublisher()
            runDeliveries()
            runHeartbeat()
            log.notice("profile reloaded", ["profile": next.name, "fences": "\(next.fences.count)"])
        } catch {
            log.error("reload failed; keeping the running profile", ["error": "\(error)"])
        }
        markStatusChanged()
    }

    /// Stops the sources, lets hooks finish, commits; returns `code`.
    public func finish(code: Int32) -> Int32 {
        notifier.stopping()
        // Running hooks get their time; they are already durable, so a hook cut short runs
        // again after the restart with the same event id.
        waitForRunningHooks(upTo: .seconds(2))
        do {
            receiverOn = false
            receiverReason = "stopped"
            journal.setValue(statusJSON(running: false), forKey: "runtime_status")
            try driver.flush(now: clock.now)
        } catch {
            log.error("cannot commit on shutdown", ["error": "\(error)"])
        }
        stopPublisher()
        coarse?.stop()
        geoclue?.stop()
        if let gpsd {
            try? gpsd.watch(enabled: false, device: nil)
            _ = gpsd.disconnect(reason: "shutting down")
        }
        log.notice("geomon stopped", ["exit_code": "\(code)"])
        return code
    }

    // MARK: - Status

    private func statusLine() -> String {
        "\(profile.fences.count) fences, receiver \(receiverOn ? "on" : "off") (\(receiverReason))"
    }

    /// The daemon's status as one JSON object (`geomon status`, and the heartbeat hooks' stdin).
    private func statusJSON(running: Bool) -> String {
        var o = JSONObject()
        o.add("running", running)
        o.add("pid", Int(getpid()))
        o.add("profile", profile.name)
        o.add("mode", profile.mode.rawValue)
        var receiver = JSONObject()
        receiver.add("state", receiverOn ? "on" : "off")
        receiver.add("reason", receiverReason)
        o.add("receiver", receiver)
        if let gpsd {
            var g = JSONObject()
            g.add("endpoint", gpsd.endpoint)
            switch gpsd.state {
            case .connected: g.add("state", "connected")
            case let .disconnected(reason): g.add("state", "disconnected: \(reason)")
            }
            o.add("gpsd", g)
        }
        if let coarse {
            var c = JSONObject()
            c.add("running", coarse.isRunning)
            c.add("malformed_lines", coarse.malformedLines)
            o.add("coarse", c)
        }
        if let geoclue {
            var c = JSONObject()
            c.add("plugin", "geoclue")
            c.add("accuracy", geoclue.settings.level.rawValue)
            c.add("client", geoclue.clientPath)
            c.add("state", geoclue.clientPath != nil ? "started" : (geoclue.isRunning ? "waiting" : "off"))
            o.add("coarse", c)
        }
        if let fix = lastFix {
            var f = JSONObject()
            f.add("time", fix.time.rfc3339)
            f.add("lat", fix.coordinate.latitude, decimals: 7)
            f.add("lon", fix.coordinate.longitude, decimals: 7)
            f.add("accuracy_m", fix.horizontalAccuracyMeters, decimals: 1)
            f.add("source", fix.source.rawValue)
            o.add("last_fix", f)
        }
        o.add("inside", driver.machine.engine.insideFenceIDs)
        o.add("pending_deliveries", (try? store.pendingDeliveryCount()) ?? 0)
        if let mqtt = profile.publish.mqtt {
            var m = JSONObject()
            m.add("broker", "\(mqtt.host):\(mqtt.effectivePort)")
            m.add("topic", mqtt.topic)
            switch publisher?.state ?? .disconnected {
            case .connected: m.add("state", "connected")
            case .connecting: m.add("state", "connecting")
            case .disconnected: m.add("state", publisher?.lastError.map { "disconnected: \($0)" } ?? "disconnected")
            }
            m.add("pending", (try? store.pendingPublicationCount()) ?? 0)
            m.add("published", publisher?.publishedCount ?? 0)
            o.add("mqtt", m)
        }
        o.add("uptime_s", Int((host.monotonicMicroseconds - startedMicros) / 1_000_000))
        o.add("loop_wakeups", wakeups)
        o.add("hooks_running", worker.runningCount)
        o.add("updated", host.wall.rfc3339)
        return o.text
    }
}

/// Why `run` could not start, with the exit code to use.
public struct LiveDaemonError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var exitCode: Int32
    public var description: String { message }
}

/// Writes to standard output unbuffered, so a pipe reader sees each event as it happens.
func writeStdout(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return
        }
        bytes = bytes.dropFirst(n)
    }
}
