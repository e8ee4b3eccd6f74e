#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
public import GeomonStore
import GeomonFormat
import GeomonHooks
import GeomonPublish

/// `geomon replay --publish`: the replay's messages go to the profile's broker on real time
/// while the replay runs (paced with `--speed`, so a consumer reacts as it would live), and
/// `drain` waits until the broker acknowledged every one.
public final class ReplayPublishing {
    private let publisher: MQTTPublisher
    private let store: EventStore
    private let log: (String) -> Void
    private var announced = false

    /// What a drain came to.
    public struct Summary: Sendable, Equatable {
        public var published: Int
        public var pending: Int
    }

    public init(profile: Profile, store: EventStore, log: @escaping (String) -> Void) throws {
        guard let mqtt = profile.publish.mqtt else { throw JournalError("the profile has no 'publish.mqtt' section: nothing to publish") }
        let own = OwnTracks(settings: mqtt, profile: profile)
        publisher = MQTTPublisher(settings: .init(settings: mqtt, profile: profile.name, statusTopic: own.statusTopic), outbox: store)
        self.store = store
        self.log = log
        let broker = "\(mqtt.host):\(mqtt.effectivePort)"
        publisher.onReport = { [unowned self] report in
            switch report {
            case .connected:
                self.announced = false
            case let .unreachable(reason, retry):
                self.log("publish: MQTT broker \(broker) unavailable: \(reason); retrying in \(NumberText.short(retry.secondsValue, 1)) s")
                self.announced = true
            case .retrying:
                break
            case let .storeFailed(error):
                self.log("publish: the outbox failed: \(error)")
            }
        }
    }

    /// New messages were committed: send what the window allows.
    public func committed() {
        publisher.poke()
        _ = publisher.step(now: MQTTPublisher.systemNow())
    }

    /// Publishes for `duration` of real time (between paced fixes), hooks running beside.
    public func pause(_ duration: Duration, hooks: ReplayHookDelivery?) throws {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            let slice = min(end - ContinuousClock.now, .milliseconds(20))
            if let hooks {
                try hooks.pause(slice)
                // Read what the broker sent (CONNACK, PUBACKs, pings) and write what waits:
                // stepping without the socket's readiness would hold every message back.
                wait(upTo: .zero)
            } else {
                wait(upTo: slice)
            }
        }
    }

    /// Publishes until nothing is pending; gives up after `patience` without any progress
    /// (the broker unreachable). Returns what was published and what is left.
    public func drain(patience: Duration) -> Summary {
        publisher.poke()
        var lastProgress = ContinuousClock.now
        var lastPending = publisher.pendingCount
        while true {
            wait(upTo: .milliseconds(200))
            let pending = publisher.pendingCount
            if pending == 0, publisher.isDrained { break }
            if pending < lastPending {
                lastPending = pending
                lastProgress = ContinuousClock.now
            }
            if ContinuousClock.now - lastProgress > patience { break }
        }
        let summary = Summary(published: publisher.publishedCount, pending: publisher.pendingCount)
        publisher.close(now: MQTTPublisher.systemNow())
        return summary
    }

    /// The broker's last error, for the final message.
    public var lastError: String? { publisher.lastError }

    /// Polls the publisher's socket for at most `limit`, then steps it.
    private func wait(upTo limit: Duration) {
        publisher.pollAndStep(timeoutMilliseconds: Int32(clamping: limit.components.seconds * 1000 + limit.components.attoseconds / 1_000_000_000_000_000))
    }
}
