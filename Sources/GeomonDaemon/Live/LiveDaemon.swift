#if canImport(Glibc)
import Glibc
#endif
import GeomonCore
public import GeomonStore
import GeomonSources
import GeomonHooks
import Foundation

/// `geomon run`: the live monitor on gpsd (and a coarse command), driving the same Monitor
/// (engine + store) that replay drives, and the power policy, on the real clock.
///
/// One thread, one `poll(2)`: the gpsd socket, the coarse command's pipe and the wake-up pipe
/// (signals, hook completions). The poll timeout is the nearest deadline (engine dwell, policy
/// wake or fix timeout, gpsd reconnect, coarse restart, hooks, heartbeat, watchdog), capped at
/// 60 s, so an idle daemon wakes at most once a minute.
public final class LiveDaemon {
    /// Exit codes `run` returns.
    public enum Exit {
        public static let ok: Int32 = 0
        public static let failure: Int32 = 1
        public static let invalidProfile: Int32 = 65
        public static let noInput: Int32 = 66
    }

    let options: RunOptions
    let log: Log
    private(set) var profile: Profile
    private var monitor: Monitor
    private let store: EventStore
    private var policy: PowerPolicy
    private var clock = DaemonClock()
    private let loop: EventLoop
    private let lock: InstanceLock
    private let notifier: SystemdNotifier
    private let databasePath: String

    private var gpsd: GPSDSource?
    private var gpsdWatchedFD: Int32?
    private var gpsdRetryAtMs: Int64?
    private var coarse: CommandSource?
    private var coarseWatchedFD: Int32?
    private var coarseRestartAtMs: Int64?

    private var receiverOn = false
    private var receiverReason = "starting"
    private var coarseWanted = false
    private var lastFix: Fix?
    private var stopRequested = false
    private var reloadRequested = false
    private var lastWatchdogMs: Int64 = 0
    private let startedMs = SystemClock.monotonicMilliseconds()
    private var statusDirty = true
    /// Wake-ups per minute, for the idle-cost figure in `status`.
    private var wakeups = 0

    /// Hook deliveries from the store, on real processes; retry times are wall-clock times.
    private var worker: DeliveryWorker
    private var deliveryWakeAt: UTCTime?
    private var heartbeat: HeartbeatDriver?
    private var heartbeatAt: UTCTime?

    /// Opens everything `run` needs; throws `LiveDaemonError` with the exit code to use.
    public init(options: RunOptions, log: Log) throws(LiveDaemonError) {
        self.options = options
        self.log = log
        let profile: Profile
        do {
            profile = try loadProfile(path: options.profilePath, insecurePermissions: options.insecurePermissions, warn: { text in
                for line in text.split(separator: "\n") { log.warning(String(line)) }
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
            lock = try InstanceLock(databasePath: databasePath)
        } catch {
            throw LiveDaemonError(message: "\(error)", exitCode: Exit.failure)
        }
        do {
            store = try EventStore(path: databasePath, keepFixes: profile.storage.keepFixes, syncEveryCommit: false)
            monitor = try Monitor(profile: profile, store: store)
        } catch let error as SQLiteError {
            throw LiveDaemonError(message: DatabaseTrust.writeFailure(path: databasePath, error), exitCode: Exit.failure)
        } catch {
            throw LiveDaemonError(message: "\(error)", exitCode: Exit.failure)
        }
        policy = PowerPolicy(configuration: Self.powerConfiguration(profile, options))
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
        heartbeat = Self.makeHeartbeat(profile: profile, options: options, log: log, wake: wake)
    }

    private static func makeWorker(profile: Profile, store: EventStore, options: RunOptions, log: Log, wake: @escaping @Sendable () -> Void) throws -> DeliveryWorker {
        let settings = DeliveryWorker.Settings(
            profileName: profile.name, profileDirectory: HookTargets.absoluteDirectory(profile.directory),
            retry: profile.hooks.retry, home: options.environment["HOME"])
        let worker = DeliveryWorker(
            queue: StoreDeliveryQueue(store: store), settings: settings, catalog: HookCatalog(settings: profile.hooks),
            probe: .fromEnvironment(options.environment), onActivity: wake)
        worker.onOutcome = { outcome in
            let metadata: KeyValuePairs<String, String> = [
                "hook.cmd": outcome.delivery.argv.joined(separator: " "), "event.id": outcome.delivery.eventID,
                "hook.attempt": "\(outcome.attempt)", "hook.result": "\(outcome.result)",
            ]
            switch outcome.decision {
            case .delivered: log.info("hook delivered", metadata)
            case .retry: log.warning("hook failed, will retry", metadata)
            case .dead: log.error("hook failed for the last time, dead-lettered", metadata)
            }
        }
        try worker.recover()
        return worker
    }

    private static func makeHeartbeat(profile: Profile, options: RunOptions, log: Log, wake: @escaping @Sendable () -> Void) -> HeartbeatDriver? {
        guard !profile.hooks.heartbeat.isEmpty else { return nil }
        let driver = HeartbeatDriver(
            settings: profile.hooks, profileName: profile.name,
            profileDirectory: HookTargets.absoluteDirectory(profile.directory), startedAt: WallClock.now(),
            home: options.environment["HOME"], onActivity: wake)
        driver.onResult = { result in
            log.info("heartbeat hook finished", ["hook.key": result.hookKey, "hook.result": "\(result.result)"])
        }
        return driver
    }

    static func powerConfiguration(_ profile: Profile, _ options: RunOptions) -> PowerConfiguration {
        var configuration = PowerConfiguration(profile: profile)
        configuration.alwaysOn = options.alwaysOn
        return configuration
    }

    /// The database this instance owns.
    public var database: String { databasePath }
    public var eventStore: EventStore { store }

    /// Runs until SIGTERM/SIGINT (or `exitAfterSeconds`); returns the exit code.
    public func run() -> Int32 {
        SignalForwarding.install(into: loop)
        defer { SignalForwarding.uninstall() }
        loop.onWake = { [weak self] bytes in self?.handleWake(bytes) }
        log.notice("geomon started", [
            "profile": profile.name, "mode": profile.mode.rawValue, "fences": "\(profile.fences.count)",
            "db": databasePath, "pid": "\(getpid())",
        ])
        setUpSources()
        perform(policy.start(now: clock.now()))
        runDeliveries()
        runHeartbeat()
        notifier.ready(status: statusLine())
        do {
            while !stopRequested {
                let timeout = nextTimeoutMilliseconds()
                loop.runOnce(timeoutMilliseconds: timeout)
                wakeups += 1
                try handleTimers()
                if reloadRequested {
                    reloadRequested = false
                    reload()
                }
                if statusDirty { try writeStatus() }
            }
            return shutdown(code: Exit.ok)
        } catch {
            log.error("stopping after an error", ["error": "\(error)"])
            return shutdown(code: Exit.failure)
        }
    }

    // MARK: - Sources

    private func setUpSources() {
        if let gnss = profile.sources.gnss {
            let endpoint = options.gpsdOverride ?? (gnss.host, gnss.port)
            gpsd = GPSDSource(host: endpoint.host, port: String(endpoint.port))
            connectGPSD()
        }
        if let settings = profile.sources.coarse, !settings.exec.isEmpty {
            coarse = CommandSource(arguments: settings.exec, restartInterval: settings.interval)
        }
    }

    private func connectGPSD() {
        guard let gpsd else { return }
        do {
            let events = try gpsd.connect()
            gpsdRetryAtMs = nil
            handle(gpsdEvents: events)
            if let fd = gpsd.fileDescriptor {
                gpsdWatchedFD = fd
                loop.watch(fd) { [weak self] _ in self?.readGPSD() }
            }
        } catch {
            let first = gpsd.backoff.failures == 0
            let delay = gpsd.backoff.failed()
            gpsdRetryAtMs = SystemClock.monotonicMilliseconds() + delay.wholeMilliseconds
            if first {
                log.warning("gpsd unavailable, retrying", ["gpsd.endpoint": gpsd.endpoint, "error": error.message])
                statusDirty = true
            } else {
                log.debug("gpsd still unavailable", ["gpsd.endpoint": gpsd.endpoint, "retry_ms": "\(delay.wholeMilliseconds)"])
            }
        }
    }

    private func readGPSD() {
        guard let gpsd else { return }
        handle(gpsdEvents: gpsd.readAvailable())
    }

    private func handle(gpsdEvents events: [GPSDSource.Event]) {
        for event in events {
            switch event {
            case let .fix(fix):
                fixArrived(fix)
            case .stateChanged(.connected):
                log.notice("gpsd connected", ["gpsd.endpoint": gpsd?.endpoint ?? "-"])
                statusDirty = true
            case let .stateChanged(.disconnected(reason)):
                log.warning("gpsd disconnected", ["gpsd.endpoint": gpsd?.endpoint ?? "-", "reason": reason])
                if let fd = gpsdWatchedFD { loop.unwatch(fd) }
                gpsdWatchedFD = nil
                let delay = gpsd?.backoff.failed() ?? .seconds(1)
                gpsdRetryAtMs = SystemClock.monotonicMilliseconds() + delay.wholeMilliseconds
                statusDirty = true
            }
        }
    }

    private func setCoarse(_ on: Bool) {
        coarseWanted = on
        guard let coarse else { return }
        if on, !coarse.isRunning {
            startCoarse()
        } else if !on, coarse.isRunning {
            if let fd = coarseWatchedFD { loop.unwatch(fd) }
            coarseWatchedFD = nil
            coarse.stop()
            coarseRestartAtMs = nil
        }
    }

    private func startCoarse() {
        guard let coarse else { return }
        do {
            try coarse.start()
            coarseRestartAtMs = nil
            if let fd = coarse.fileDescriptor {
                coarseWatchedFD = fd
                loop.watch(fd) { [weak self] _ in self?.readCoarse() }
            }
            log.info("coarse source started", ["coarse.cmd": coarse.arguments.joined(separator: " ")])
        } catch {
            log.warning("coarse source failed to start", ["error": error.description])
            coarseRestartAtMs = SystemClock.monotonicMilliseconds() + coarse.restartInterval.wholeMilliseconds
        }
    }

    private func readCoarse() {
        guard let coarse else { return }
        let before = coarse.malformedLines
        for event in coarse.readAvailable() {
            switch event {
            case let .fix(fix):
                fixArrived(fix)
            case let .exited(status):
                if let fd = coarseWatchedFD { loop.unwatch(fd) }
                coarseWatchedFD = nil
                log.info("coarse source exited", ["exit_status": "\(status)", "restart_s": "\(coarse.restartInterval.secondsValue)"])
                if coarseWanted {
                    coarseRestartAtMs = SystemClock.monotonicMilliseconds() + coarse.restartInterval.wholeMilliseconds
                }
            }
        }
        if coarse.malformedLines > before {
            log.warning("coarse source printed malformed lines", ["count": "\(coarse.malformedLines - before)", "error": coarse.lastError ?? "-"])
        }
    }

    // MARK: - Fixes, deadlines, actions

    private func fixArrived(_ fix: Fix) {
        // While the policy has the receiver off, late reports from gpsd are not used: the
        // engine sees what replay's receiver model would deliver.
        if fix.source == .gnss, !receiverOn { return }
        clock.fixArrived(fix.time)
        let now = clock.now()
        lastFix = fix
        statusDirty = true
        guard case let .pass(fixes) = policy.screen(fix), let last = fixes.last else {
            log.info("implausible jump held until confirmed", ["fix.lat": "\(fix.coordinate.latitude)", "fix.lon": "\(fix.coordinate.longitude)"])
            return
        }
        var lastAccepted = false
        do {
            for f in fixes {
                let (accepted, events) = try monitor.fixReceived(f, now: now)
                lastAccepted = accepted
                emit(events.map(\.event), now: now)
            }
        } catch {
            log.error("cannot commit", ["error": "\(error)"])
            stopRequested = true
            return
        }
        let context = PolicyContext.make(engine: monitor.engine, fix: last, accepted: lastAccepted, configuration: policy.configuration)
        perform(policy.fixReceived(last, context: context, now: now))
    }

    private func handleTimers() throws {
        let nowMs = SystemClock.monotonicMilliseconds()
        if let retry = gpsdRetryAtMs, retry <= nowMs {
            gpsdRetryAtMs = nil
            connectGPSD()
        }
        if let restart = coarseRestartAtMs, restart <= nowMs, coarseWanted {
            coarseRestartAtMs = nil
            startCoarse()
        }
        if let interval = notifier.watchdogIntervalMilliseconds, nowMs - lastWatchdogMs >= interval {
            notifier.watchdog()
            lastWatchdogMs = nowMs
        }
        if let limit = options.exitAfterSeconds, Double(nowMs - startedMs) >= limit * 1000 {
            log.notice("exit-after reached")
            stopRequested = true
        }
        let now = clock.now()
        if let deadline = monitor.nextDeadline, deadline <= now {
            let events = try monitor.deadlineReached(at: now)
            emit(events.map(\.event), now: now)
        }
        if let deadline = policy.nextDeadline, deadline <= now {
            perform(policy.deadlineReached(now: now))
        }
        let wall = WallClock.now()
        if let wake = deliveryWakeAt, wake <= wall {
            runDeliveries()
        }
        if let beat = heartbeatAt, beat <= wall {
            runHeartbeat()
        }
    }

    private func perform(_ actions: [PowerAction]) {
        for action in actions {
            log.info("power", ["power.action": action.description])
            switch action {
            case let .gnssOn(reason):
                receiverOn = true
                receiverReason = reason.description
                setWatch(true)
            case let .gnssOff(reason):
                receiverOn = false
                receiverReason = reason.description
                setWatch(false)
            case let .wakeAt(_, reason):
                receiverReason = reason.description
            case .coarseOn:
                setCoarse(true)
            case .coarseOff:
                setCoarse(false)
            }
            statusDirty = true
        }
    }

    private func setWatch(_ enabled: Bool) {
        guard let gpsd else { return }
        do {
            try gpsd.watch(enabled: enabled, device: profile.sources.gnss?.device)
        } catch {
            log.warning("cannot change the gpsd watch", ["error": error.message])
            _ = gpsd.disconnect(reason: error.message)
            handle(gpsdEvents: [.stateChanged(.disconnected(reason: error.message))])
        }
    }

    private func emit(_ events: [GeoEvent], now: UTCTime) {
        guard !events.isEmpty else { return }
        for event in events {
            log.notice("event", [
                "event.type": event.kind.rawValue, "fence.id": event.fenceID ?? "-", "event.id": event.id,
                "event.time": event.time.rfc3339, "event.rule": event.rule,
            ])
            if options.printEvents { writeStdout(EventFormatter.json(event) + "\n") }
        }
        statusDirty = true
        runDeliveries()
    }

    /// Records finished hooks and starts what is due (after commits, hook completions, retries).
    private func runDeliveries() {
        do {
            deliveryWakeAt = try worker.poll(now: WallClock.now())
            statusDirty = true
        } catch {
            log.error("hook delivery failed to update the store", ["error": "\(error)"])
            deliveryWakeAt = WallClock.now() + .seconds(5)
        }
    }

    /// Lets running hooks finish (recording their results) for at most `limit`.
    private func waitForRunningHooks(upTo limit: Duration) {
        let end = ContinuousClock.now + limit
        while worker.runningCount > 0, ContinuousClock.now < end {
            worker.waitForActivity(timeout: .milliseconds(100))
            _ = try? worker.poll(now: WallClock.now())
        }
    }

    private func runHeartbeat() {
        guard let heartbeat else { return }
        heartbeatAt = heartbeat.poll(now: WallClock.now(), status: { statusJSON(running: true) })
    }

    // MARK: - Signals, reload, shutdown

    private func handleWake(_ bytes: [UInt8]) {
        for byte in bytes {
            switch byte {
            case SignalForwarding.byte(for: SIGTERM), SignalForwarding.byte(for: SIGINT):
                log.notice("stopping on signal")
                stopRequested = true
            case SignalForwarding.byte(for: SIGHUP):
                reloadRequested = true
            default:
                // A hook finished: let the worker record it and start what is next.
                runDeliveries()
                runHeartbeat()
            }
        }
    }

    /// SIGHUP: load and validate the profile again; on error keep the old one. Fences that
    /// remain keep their state (the engine restores it from the store by fence id).
    private func reload() {
        log.notice("reloading profile", ["profile.path": options.profilePath])
        notifier.reloading()
        let next: Profile
        do {
            next = try loadProfile(path: options.profilePath, insecurePermissions: options.insecurePermissions, warn: { [log] text in
                for line in text.split(separator: "\n") { log.warning(String(line)) }
            })
        } catch {
            for line in error.description.split(separator: "\n") { log.error(String(line)) }
            log.error("reload failed; keeping the running profile", ["profile": profile.name])
            notifier.ready(status: statusLine())
            return
        }
        guard next.name == profile.name else {
            log.error("reload failed: the profile name changed; restart geomon for a new database", ["profile": profile.name, "new": next.name])
            notifier.ready(status: statusLine())
            return
        }
        do {
            _ = try monitor.flush(now: clock.now())
            let fresh = try Monitor(profile: next, store: store)
            let wakeFD = loop.wakeWrite
            let wake: @Sendable () -> Void = { EventLoop.writeByte(wakeFD, 1) }
            // Hooks already running finish and are recorded by the worker that started them.
            waitForRunningHooks(upTo: .seconds(60))
            worker = try Self.makeWorker(profile: next, store: store, options: options, log: log, wake: wake)
            heartbeat = Self.makeHeartbeat(profile: next, options: options, log: log, wake: wake)
            monitor = fresh
            profile = next
            policy = PowerPolicy(configuration: Self.powerConfiguration(next, options))
            perform(policy.start(now: clock.now()))
            log.notice("profile reloaded", ["profile": next.name, "fences": "\(next.fences.count)"])
        } catch {
            log.error("reload failed; keeping the running profile", ["error": "\(error)"])
        }
        statusDirty = true
        notifier.ready(status: statusLine())
    }

    private func shutdown(code: Int32) -> Int32 {
        notifier.stopping()
        // Running hooks get their time; they are already durable, so a hook cut short runs
        // again after the restart with the same event id.
        waitForRunningHooks(upTo: .seconds(2))
        do {
            _ = try monitor.flush(now: clock.now())
            statusDirty = true
            receiverOn = false
            receiverReason = "stopped"
            try writeStatus(running: false)
        } catch {
            log.error("cannot commit on shutdown", ["error": "\(error)"])
        }
        coarse?.stop()
        if let gpsd {
            try? gpsd.watch(enabled: false)
            _ = gpsd.disconnect(reason: "shutting down")
        }
        log.notice("geomon stopped", ["exit_code": "\(code)"])
        return code
    }

    // MARK: - Timing and status

    private func nextTimeoutMilliseconds() -> Int64 {
        var best: Int64 = 60_000
        let nowMs = SystemClock.monotonicMilliseconds()
        for deadline in [monitor.nextDeadline, policy.nextDeadline].compactMap({ $0 }) {
            best = min(best, clock.milliseconds(until: deadline))
        }
        let wall = WallClock.now()
        for deadline in [deliveryWakeAt, heartbeatAt].compactMap({ $0 }) {
            best = min(best, max(0, deadline.millisecondsSince1970 - wall.millisecondsSince1970))
        }
        for at in [gpsdRetryAtMs, coarseWanted ? coarseRestartAtMs : nil].compactMap({ $0 }) {
            best = min(best, max(0, at - nowMs))
        }
        if let interval = notifier.watchdogIntervalMilliseconds {
            best = min(best, max(0, lastWatchdogMs + interval - nowMs))
        }
        if let limit = options.exitAfterSeconds {
            best = min(best, max(0, startedMs + Int64(limit * 1000) - nowMs))
        }
        return best
    }

    private func statusLine() -> String {
        "\(profile.fences.count) fences, receiver \(receiverOn ? "on" : "off") (\(receiverReason))"
    }

    /// The status `geomon status` shows for a running instance, kept in the store's kv table.
    private func writeStatus(running: Bool = true) throws {
        statusDirty = false
        monitor.setValue(statusJSON(running: running), forKey: "runtime_status")
        _ = try monitor.flush(now: clock.now())
    }

    /// The daemon's status as one JSON object (also the heartbeat hooks' stdin).
    private func statusJSON(running: Bool) -> String {
        let inside = monitor.engine.snapshot.records.filter { $0.state == .inside }.map(\.fenceID).sorted()
        var json = "{\"running\":\(running),\"pid\":\(getpid()),\"profile\":\(JSONLiteral.string(profile.name))"
        json += ",\"mode\":\(JSONLiteral.string(profile.mode.rawValue))"
        json += ",\"receiver\":{\"state\":\(JSONLiteral.string(receiverOn ? "on" : "off")),\"reason\":\(JSONLiteral.string(receiverReason))}"
        if let gpsd {
            let state: String
            switch gpsd.state {
            case .connected: state = "connected"
            case let .disconnected(reason): state = "disconnected: \(reason)"
            }
            json += ",\"gpsd\":{\"endpoint\":\(JSONLiteral.string(gpsd.endpoint)),\"state\":\(JSONLiteral.string(state))}"
        }
        if let coarse {
            json += ",\"coarse\":{\"running\":\(coarse.isRunning),\"malformed_lines\":\(coarse.malformedLines)}"
        }
        if let fix = lastFix {
            json += ",\"last_fix\":{\"time\":\(JSONLiteral.string(fix.time.rfc3339)),\"lat\":\(fix.coordinate.latitude),\"lon\":\(fix.coordinate.longitude),\"accuracy_m\":\(fix.horizontalAccuracyMeters),\"source\":\(JSONLiteral.string(fix.source.rawValue))}"
        }
        json += ",\"inside\":[" + inside.map(JSONLiteral.string).joined(separator: ",") + "]"
        json += ",\"pending_deliveries\":\((try? store.pendingDeliveryCount()) ?? 0)"
        let uptimeS = Double(SystemClock.monotonicMilliseconds() - startedMs) / 1000
        json += ",\"uptime_s\":\(Int(uptimeS)),\"loop_wakeups\":\(wakeups)"
        json += ",\"hooks_running\":\(worker.runningCount)"
        json += ",\"updated\":\(JSONLiteral.string(SystemClock.now().rfc3339))}"
        return json
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
