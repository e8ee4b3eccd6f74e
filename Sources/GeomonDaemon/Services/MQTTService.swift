#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonPublish
import GeomonSources
import GeomonFormat
import GeomonConfig
import GeomonSystem
public import GeomonStore

/// The MQTT publisher (`publish.mqtt`): messages from the store's outbox, in order, marked when
/// the broker acknowledged them. Its socket is polled by the driver; its own timers (keepalive,
/// the connect timeout, reconnect backoff) are on the kernel's monotonic clock whatever the
/// driver's, so a replay's virtual clock never stretches a network protocol's time.
public final class MQTTService: EventSource, EffectSink, ClockHolding, PublishesNow {
    public let name = "mqtt"
    private let store: EventStore
    /// The MQTT messages the commits write (the driver's journal holds it among its outboxes).
    private let outbox: OwnTracksOutbox
    private let log: Log
    private var publisher: MQTTPublisher?
    private var settings: MQTTSettings?
    private var profileName: String
    private var wakeAt: Int64?
    /// Where the device's battery is read (`/sys/class/power_supply`); nil: never.
    private let powerSupply: String?
    private var batteryReadAt: Int64?
    /// How long a replay's end waits for a broker that makes no progress.
    public var patience: Duration = .seconds(30)
    private var lastProgress: (pending: Int, at: Int64)?

    /// Whether `start` queues the waypoints (a run: always, replacing the retained ones; a
    /// replay: when it starts a database, not when it resumes one).
    private let waypointsAtStart: Bool

    /// Whether OwnTracks commands on `TOPIC/cmd` are acted on (`geomon run` with
    /// `publish.mqtt.commands`; never a replay).
    private let acceptsCommands: Bool
    /// The last `reportLocation` answered (monotonic µs): at most one a `reportInterval`.
    private var lastReport: Int64?
    /// A `reportLocation` found no fresh fix and woke the receiver: its next fix is the answer.
    private var reportNextFix = false
    private var subscribedLogged = false
    private var subscriptionRefusedLogged: String?

    /// Appended to the client id of a replay's connection (`acceptsCommands` off).
    public static let replayClientSuffix = "-replay"
    /// The most fences the server may have pushed at once.
    public static let maxPushedFences = 1000
    /// `reportLocation`: a fix this recent is the answer; older, the receiver is woken.
    public static let freshFix: Duration = .seconds(60)
    /// `reportLocation`: at most one answered this often.
    public static let reportInterval: Duration = .seconds(30)

    public init(profile: Profile, store: EventStore, outbox: OwnTracksOutbox, log: Log, powerSupply: String?, waypointsAtStart: Bool = true,
                acceptsCommands: Bool = false) {
        self.outbox = outbox
        self.acceptsCommands = acceptsCommands
        self.waypointsAtStart = waypointsAtStart
        self.store = store
        self.log = log
        self.powerSupply = powerSupply
        profileName = profile.name
        settings = profile.publish.mqtt
    }

    /// Messages the broker acknowledged since start, and its last error (kept after the stop).
    public private(set) var publishedCount = 0
    public private(set) var lastError: String?

    public var pollRequest: PollRequest? {
        guard let publisher, let fd = publisher.fileDescriptor else { return nil }
        return PollRequest(fd: fd, events: publisher.pollEvents)
    }

    public var nextWake: Int64? { wakeAt }
    public var wakeClock: WakeClock { .real }

    /// Nothing pending, or no progress for `patience` (the broker is not there).
    public var isSettled: Bool {
        guard let publisher else { return true }
        let pending = publisher.pendingCount
        if pending == 0, publisher.isDrained { return true }
        let now = SystemHostClock.monotonicMicroseconds()
        if lastProgress?.pending != pending { lastProgress = (pending, now) }
        return now - (lastProgress?.at ?? now) > patience.wholeMicroseconds
    }

    public func start(_ driver: DriverContext) throws {
        do {
            try outbox.resumeStays(store: store)
        } catch {
            log.error("MQTT outbox failed: a stay entered under a waypoint since replaced leaves with the new one's wtst", ["error": "\(error)"])
        }
        try open(driver, queueWaypoints: waypointsAtStart)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        step(revents: revents, driver)
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        guard publisher != nil, case let .took(fix, _) = effect else { return }
        readBattery(driver)
        // The next fix the engine can use answers it (a poorer one is never published).
        if reportNextFix, outbox.queueLocationReport(fix) {
            reportNextFix = false
            driver.emit(.commitSoon)
            log.info("reportLocation answered", ["fix.time": fix.time.rfc3339])
        }
    }

    /// The battery for the messages of the next commits, read at most once a minute.
    private func readBattery(_ driver: DriverContext) {
        guard let powerSupply else { return }
        let now = SystemHostClock.monotonicMicroseconds()
        if batteryReadAt.map({ now - $0 >= 60_000_000 }) ?? true {
            batteryReadAt = now
            outbox.battery = PowerSupply.battery(in: powerSupply)
        }
    }

    public func committed(_ events: [StoredEvent], _ driver: DriverContext) throws {
        guard let publisher else { return }
        publisher.poke()
        step(revents: 0, driver)
    }

    public func publishNow(_ driver: DriverContext) throws {
        guard let publisher else { return }
        publisher.reconnectNow()
        publisher.poke()
        step(revents: 0, driver)
    }

    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        if profile.publish.mqtt != settings { close() }
        settings = profile.publish.mqtt
        profileName = profile.name
        try open(driver, queueWaypoints: true)
    }

    public func stop(_ driver: DriverContext) {
        close()
    }

    /// Queues the waypoints and starts (or keeps) the publisher when the profile publishes.
    private func open(_ driver: DriverContext, queueWaypoints: Bool) throws {
        guard let mqtt = settings, outbox.publishes else { return }
        // Before anything on the new topic: consumers of one the profile left see the device
        // leave its regions, and the broker forgets what it kept there.
        let broker = "\(mqtt.host):\(mqtt.effectivePort)"
        let own = OwnTracks(settings: mqtt, profile: driver.profile)
        // The retained topics these settings publish: what going back to a topic and a lost
        // session publish again.
        let retainedTopics = [mqtt.topic] + (mqtt.waypoints ? [own.waypointsTopic] : [])
        do {
            for retired in try outbox.queueRetirements(store: store, broker: broker) {
                if retired.sent {
                    log.notice("MQTT topic no longer published: its regions left and its retained messages cleared",
                               ["mqtt.topic": retired.topic, "regions_left": "\(retired.regions)", "mqtt.topic.now": mqtt.topic])
                    driver.emit(.commitSoon)
                } else {
                    log.notice("MQTT topic no longer published, on another broker than now: left as it was there",
                               ["mqtt.topic": retired.topic, "mqtt.broker": broker])
                }
            }
            // Back on a topic it left: a retirement still pending is taken back, and once sent,
            // its last location (and waypoints) are its consumers' again. A retirement taken
            // back may have reached the broker in part (a message in flight when the connection
            // closed looks pending): the last retained messages go again.
            let withdrawn = try store.outbox.withdrawRetirement(of: mqtt.topic)
            if try store.outbox.requeueRetained(at: driver.wall, topics: retainedTopics, onlyCleared: withdrawn == 0) > 0 {
                log.info("MQTT topic published on again: its last retained messages are published again", ["mqtt.topic": mqtt.topic])
            }
        } catch {
            log.error("MQTT outbox failed: the topics the profile left are retired at the next start or reload", ["error": "\(error)"])
        }
        if queueWaypoints {
            outbox.queueWaypoints(at: driver.wall)
            driver.emit(.commitSoon)
        }
        if publisher == nil {
            var publisherSettings = MQTTPublisher.Settings(settings: mqtt, profile: profileName, statusTopic: own.statusTopic)
            if !acceptsCommands {
                // A replay reads no commands and must not take the daemon's session (the
                // commands the broker keeps for it) or throw it off: a client id of its own,
                // with a clean session.
                publisherSettings.commandTopic = nil
                publisherSettings.clientID += Self.replayClientSuffix
            }
            let publisher = MQTTPublisher(settings: publisherSettings, outbox: store.outbox)
            publisher.onReport = { [log, store, weak publisher] report in
                // A broker without geomon's session may have lost its retained messages too
                // (restarted without persistence): the last waypoints and location go again.
                func requeueRetained() {
                    do {
                        let requeued = try store.outbox.requeueRetained(at: WallClock.now(), topics: retainedTopics)
                        if requeued > 0 {
                            log.info("MQTT session not kept by the broker: its retained messages are published again", ["requeued": "\(requeued)"])
                            publisher?.poke()
                        }
                    } catch {
                        log.error("MQTT outbox failed", ["error": "\(error)"])
                    }
                }
                switch report {
                case let .connected(pending, outage, sessionPresent):
                    var metadata: KeyValuePairs<String, String> = ["mqtt.broker": broker, "pending": "\(pending)"]
                    if let outage { metadata = ["mqtt.broker": broker, "pending": "\(pending)", "outage_s": NumberText.short(outage, 1)] }
                    log.notice("MQTT connected", metadata)
                    if !sessionPresent { requeueRetained() }
                case let .reconnected(pending, sessionPresent):
                    log.info("MQTT connected again", ["mqtt.broker": broker, "pending": "\(pending)"])
                    if !sessionPresent { requeueRetained() }
                case let .refused(count, reason, topic):
                    log.warning("MQTT broker refused messages; they are kept as refused and not sent again ('geomon publish list' shows them)",
                                ["mqtt.broker": broker, "mqtt.topic": topic, "refused": "\(count)", "reason": reason])
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
        readBattery(driver)
        publisher?.poke()
        step(revents: 0, driver)
    }

    private func close() {
        if let publisher {
            publishedCount += publisher.publishedCount
            lastError = publisher.lastError
        }
        publisher?.close(now: MQTTPublisher.systemNow())
        publisher = nil
        wakeAt = nil
    }

    /// Lets the publisher do what is due (input on its socket, a timer, a commit).
    private func step(revents: Int16, _ driver: DriverContext) {
        guard let publisher, let mqtt = settings else { return }
        wakeAt = publisher.step(revents: revents, now: MQTTPublisher.systemNow())
        lastError = publisher.lastError
        let state: String = switch publisher.state {
        case .connected: "connected"
        case .connecting: "connecting"
        case .disconnected: publisher.lastError.map { "disconnected: \($0)" } ?? "disconnected"
        }
        let next = RuntimeStatus.MQTT(broker: "\(mqtt.host):\(mqtt.effectivePort)", topic: mqtt.topic, state: state, published: publisher.publishedCount)
        driver.updateStatus(\.mqtt, next)
        guard acceptsCommands, mqtt.commands else { return }
        if publisher.subscribed != subscribedLogged {
            subscribedLogged = publisher.subscribed
            if subscribedLogged { log.notice("MQTT commands subscribed", ["mqtt.topic": mqtt.commandTopic]) }
        }
        if publisher.subscriptionRefused != subscriptionRefusedLogged {
            subscriptionRefusedLogged = publisher.subscriptionRefused
            if let reason = subscriptionRefusedLogged {
                log.warning("MQTT broker refused the command subscription: no command will arrive (check the broker's ACL for the topic)",
                            ["mqtt.topic": mqtt.commandTopic, "reason": reason])
            }
        }
        for message in publisher.takeReceived() { command(message, driver) }
    }

    // MARK: - Commands

    /// One message on `TOPIC/cmd`: acted on when it is an accepted OwnTracks command, refused
    /// otherwise; stored either way (but a retained one, which is not a command sent now).
    private func command(_ message: MQTTPublisher.Received, _ driver: DriverContext) {
        if message.retained {
            log.warning("MQTT command ignored: a retained message (commands are never retained; clear it with 'mosquitto_pub -r -n -t \(message.topic)')",
                        ["mqtt.topic": message.topic])
            return
        }
        if message.size == 0 {
            // How a retained message is deleted: not a command.
            log.info("MQTT command ignored: an empty message (a retained one being cleared)", ["mqtt.topic": message.topic])
            return
        }
        guard message.size <= OwnTracksCommand.maxBytes else {
            refuse(message, action: "-", "\(message.size) bytes, more than the \(OwnTracksCommand.maxBytes) a command may have", driver)
            return
        }
        let command: OwnTracksCommand
        switch OwnTracksCommand.parse(message.payload) {
        case .failure(let failure):
            refuse(message, action: "-", failure.message, driver)
            return
        case .success(let parsed):
            command = parsed
        }
        do {
            switch command.action {
            case .refused:
                refuse(message, action: command.name, "the action '\(command.name)' is not accepted (only setWaypoints, clearWaypoints, waypoints, reportLocation, placeFence and removeFence are)", driver)
            case let .setWaypoints(waypoints, skipped):
                try setWaypoints(waypoints, skipped: skipped, message, driver)
            case let .placeFence(id, name, radius):
                if driver.profile.fences.contains(where: { $0.id == id && $0.pushed == nil }) {
                    refuse(message, action: command.name, "'\(id)' is a fence of the profile: a placed fence cannot replace it", driver)
                    return
                }
                guard let found = try AnchorPosition.find(in: store) else {
                    refuse(message, action: command.name, "no fix is stored yet to place '\(id)' at", driver)
                    return
                }
                let summary = "placed '\(id)', \(Int(radius.rounded())) m around the mean of \(found.fixes) fixes (newest \(found.last.time.rfc3339))"
                let seq = try store.commandLog.record(StoredCommand(received: driver.wall, topic: message.topic, action: command.name, accepted: true, summary: summary))
                try store.placedFenceList.upsert(PlacedFence(fenceID: id, name: name, center: found.center, radiusMeters: radius,
                                                             placedAt: driver.wall, placedBy: "MQTT command \(seq)"))
                log.notice("MQTT command accepted", ["command": "\(seq)", "action": command.name, "summary": summary])
                try pushedFencesChanged(driver)
            case let .removeFence(id):
                guard try store.placedFenceList.delete(fenceID: id) else {
                    refuse(message, action: command.name, "no placed fence '\(id)'", driver)
                    return
                }
                let seq = try store.commandLog.record(StoredCommand(received: driver.wall, topic: message.topic, action: command.name, accepted: true,
                                                                summary: "removed the placed fence '\(id)'"))
                log.notice("MQTT command accepted", ["command": "\(seq)", "action": command.name, "fence.id": id])
                try pushedFencesChanged(driver)
            case .clearWaypoints:
                let count = try store.pushedFenceList.all().count
                let seq = try store.commandLog.record(StoredCommand(received: driver.wall, topic: message.topic, action: command.name, accepted: true,
                                                                summary: "removed \(count) pushed fence\(count == 1 ? "" : "s")"), clearing: true)
                log.notice("MQTT command accepted", ["command": "\(seq)", "action": command.name, "removed": "\(count)"])
                try pushedFencesChanged(driver)
            case .waypoints:
                let seq = try store.commandLog.record(StoredCommand(received: driver.wall, topic: message.topic, action: command.name, accepted: true,
                                                                summary: "published the waypoints"))
                log.notice("MQTT command accepted", ["command": "\(seq)", "action": command.name])
                outbox.queueWaypoints(at: driver.wall)
                driver.emit(.commitSoon)
            case .reportLocation:
                try reportLocation(message, command.name, driver)
            }
        } catch {
            log.error("MQTT command could not be stored; it is not applied", ["action": command.name, "error": "\(error)"])
        }
    }

    private func refuse(_ message: MQTTPublisher.Received, action: String, _ reason: String, _ driver: DriverContext) {
        log.warning("MQTT command refused", ["mqtt.topic": message.topic, "action": action, "reason": reason])
        do {
            try store.commandLog.record(StoredCommand(received: driver.wall, topic: message.topic, action: action, accepted: false, summary: reason))
        } catch {
            log.error("MQTT command could not be stored", ["error": "\(error)"])
        }
    }

    /// `setWaypoints`: merged into the pushed fences by the waypoints' identity, as the apps
    /// merge (a waypoint without a region removes the one with its identity); a waypoint whose
    /// id is a profile fence's, or another pushed waypoint's, is left out. The set must stay
    /// within `maxPushedFences`. Stored with the command in one transaction; then the fences
    /// are monitored (and the waypoints republished) at once.
    private func setWaypoints(_ waypoints: [OwnTracksCommand.Waypoint], skipped: [String], _ message: MQTTPublisher.Received,
                              _ driver: DriverContext) throws {
        let existing = try store.pushedFenceList.all()
        var byKey: [String: PushedFence] = [:]
        for fence in existing { byKey[fence.key] = fence }
        let profileIDs = Set(driver.profile.fences.filter { $0.pushed == nil }.map(\.id))
        let placedIDs = Set(try store.placedFenceList.all().map(\.fenceID))
        var setOrder: [String] = [], notes = skipped
        var unchanged = 0
        for w in waypoints {
            if w.removes {
                if byKey.removeValue(forKey: w.key) == nil {
                    notes.append("'\(w.name)': no pushed fence \(w.key) to remove")
                }
                continue
            }
            if profileIDs.contains(w.fenceID) {
                notes.append("'\(w.fenceID)' is a fence of the profile: a pushed fence cannot replace it")
                continue
            }
            if placedIDs.contains(w.fenceID) {
                notes.append("'\(w.fenceID)' is a fence placed on the device (geomon fences here): a pushed fence cannot replace it")
                continue
            }
            if let other = byKey.values.first(where: { $0.fenceID == w.fenceID && $0.key != w.key }) {
                notes.append("'\(w.fenceID)' is the id of another pushed waypoint (\(other.key))")
                continue
            }
            let fence = PushedFence(key: w.key, fenceID: w.fenceID, name: w.name, center: w.center, radiusMeters: w.radiusMeters,
                                    pushedAt: driver.wall, command: 0, waypointTime: w.tst)
            if let old = byKey[w.key], Self.same(old, fence) {
                unchanged += 1
                continue
            }
            byKey[w.key] = fence
            if !setOrder.contains(w.key) { setOrder.append(w.key) }
        }
        // The net change, the waypoints applied in order: one set and then removed in the same
        // command leaves nothing; removed and then set, the new one.
        let before = Dictionary(existing.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        let setting = setOrder.compactMap { key -> PushedFence? in
            guard let fence = byKey[key] else { return nil }
            return before[key].map { Self.same($0, fence) } == true ? nil : fence
        }
        let removing = existing.map(\.key).filter { byKey[$0] == nil }
        if byKey.count > Self.maxPushedFences {
            refuse(message, action: "setWaypoints", "it would make \(byKey.count) pushed fences, more than the \(Self.maxPushedFences) allowed", driver)
            return
        }
        var summary = "set \(setting.count) (\(setting.map(\.fenceID).joined(separator: ", "))), removed \(removing.count), unchanged \(unchanged)"
        if !notes.isEmpty { summary += "; left out: " + notes.joined(separator: "; ") }
        let seq = try store.commandLog.record(StoredCommand(received: driver.wall, topic: message.topic, action: "setWaypoints", accepted: true, summary: summary),
                                          removing: removing, setting: setting)
        log.notice("MQTT command accepted", ["command": "\(seq)", "action": "setWaypoints", "summary": summary])
        for note in notes { log.warning("setWaypoints: a waypoint was left out", ["command": "\(seq)", "reason": note]) }
        if setting.isEmpty && removing.isEmpty {
            // Nothing changed: the acknowledgement all the same.
            outbox.queueWaypoints(at: driver.wall)
            driver.emit(.commitSoon)
        } else {
            try pushedFencesChanged(driver)
        }
    }

    /// Whether two pushed fences are the same waypoint (when and by which command aside).
    private static func same(_ a: PushedFence, _ b: PushedFence) -> Bool {
        a.fenceID == b.fenceID && a.name == b.name && a.center == b.center && a.radiusMeters == b.radiusMeters && a.waypointTime == b.waypointTime
    }

    /// The pushed fences changed: the running profile with the stored ones, from now on (the
    /// reload republishes the waypoints: the acknowledgement).
    private func pushedFencesChanged(_ driver: DriverContext) throws {
        let next = try withPushedFences(driver.profile, store: store, log: log)
        log.notice("pushed fences changed", ["pushed": "\(next.fences.count { $0.pushed != nil })", "fences": "\(next.fences.count)"])
        driver.replaceProfile(next)
    }

    /// `reportLocation`: the last fix when it is fresh, else the next fix after a wake of the
    /// receiver; at most one every `reportInterval`.
    private func reportLocation(_ message: MQTTPublisher.Received, _ name: String, _ driver: DriverContext) throws {
        let now = SystemHostClock.monotonicMicroseconds()
        if let last = lastReport, now - last < Self.reportInterval.wholeMicroseconds {
            refuse(message, action: name, "at most one reportLocation every \(Int(Self.reportInterval.secondsValue)) s", driver)
            return
        }
        lastReport = now
        if let fix = driver.status.lastFix, driver.now - fix.time <= Self.freshFix, outbox.queueLocationReport(fix) {
            try store.commandLog.record(StoredCommand(received: driver.wall, topic: message.topic, action: name, accepted: true,
                                                  summary: "answered with the fix of \(fix.time.rfc3339)"))
            log.notice("MQTT command accepted", ["action": name, "fix.time": fix.time.rfc3339])
            driver.emit(.commitSoon)
        } else {
            try store.commandLog.record(StoredCommand(received: driver.wall, topic: message.topic, action: name, accepted: true,
                                                  summary: "no fresh fix: the receiver is woken and its next fix is the answer"))
            log.notice("MQTT command accepted", ["action": name, "answer": "the next fix"])
            reportNextFix = true
            driver.emit(.wakeRequest)
        }
    }
}
