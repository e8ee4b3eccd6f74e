#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
public import GeomonPublish
public import GeomonSources
import GeomonFormat
public import GeomonStore

/// The MQTT publisher (`publish.mqtt`): messages from the store's outbox, in order, marked when
/// the broker acknowledged them. Its socket is polled by the driver; its own timers (keepalive,
/// the connect timeout, reconnect backoff) are on the kernel's monotonic clock whatever the
/// driver's, so a replay's virtual clock never stretches a network protocol's time.
public final class MQTTService: Service {
    public let name = "mqtt"
    private let store: EventStore
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

    public init(profile: Profile, store: EventStore, log: Log, powerSupply: String?, waypointsAtStart: Bool = true) {
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
        try open(driver, queueWaypoints: waypointsAtStart)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        step(revents: revents, driver)
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        guard publisher != nil, case .took = effect else { return }
        readBattery(driver)
    }

    /// The battery for the messages of the next commits, read at most once a minute.
    private func readBattery(_ driver: DriverContext) {
        guard let powerSupply else { return }
        let now = SystemHostClock.monotonicMicroseconds()
        if batteryReadAt.map({ now - $0 >= 60_000_000 }) ?? true {
            batteryReadAt = now
            driver.journal?.battery = PowerSupply.battery(in: powerSupply)
        }
    }

    public func committed(_ events: [StoredEvent], _ driver: DriverContext) throws {
        guard let publisher else { return }
        publisher.poke()
        step(revents: 0, driver)
    }

    public func requeueDead(_ driver: DriverContext) throws {
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
        guard let mqtt = settings, let journal = driver.journal, journal.publishes else { return }
        if queueWaypoints { journal.queueWaypoints(at: driver.wall) }
        if publisher == nil {
            let own = OwnTracks(settings: mqtt, profile: driver.profile)
            let publisher = MQTTPublisher(settings: .init(settings: mqtt, profile: profileName, statusTopic: own.statusTopic), outbox: store)
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
        if driver.status.mqtt != next {
            driver.status.mqtt = next
            driver.statusChanged()
        }
    }
}
