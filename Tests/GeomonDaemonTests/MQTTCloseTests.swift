import Foundation
import GeomonCore
import GeomonPublish
import GeomonStore
import GeomonTestSupport
import Testing

/// The publisher's clean stop against a real mosquitto: what the retained status says after it.
@Suite(.serialized, .enabled(if: MosquittoBroker.shouldRun), .timeLimit(.minutes(2)))
struct MQTTCloseTests {
    static let topic = "owntracks/geomon/van"

    /// A clean stop (SIGTERM, a reload) while a backlog drains: the window is full of messages
    /// the broker has not acknowledged yet. The offline status still goes out before the
    /// DISCONNECT, so the retained status says offline, as Home Assistant must see it. (No
    /// report handler is set: the publisher serves without one.)
    @Test(arguments: [MQTTSettings.ProtocolVersion.v311, .v5])
    func aCleanStopWithTheWindowFullLeavesTheStatusOffline(_ version: MQTTSettings.ProtocolVersion) throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("outbox.db"))
        var mqtt = MQTTSettings(host: "127.0.0.1", topic: Self.topic)
        mqtt.port = Int(broker.port)
        mqtt.username = "geomon"
        mqtt.password = "s3cret"
        mqtt.protocolVersion = version
        var settings = MQTTPublisher.Settings(settings: mqtt, profile: "van", statusTopic: Self.topic + "/status")
        settings.window = 2
        let publisher = MQTTPublisher(settings: settings, outbox: store.outbox)
        let deadline = ContinuousClock.now + .seconds(20)
        while publisher.state != .connected || publisher.pendingCount > 0 || !publisher.isDrained, ContinuousClock.now < deadline {
            publisher.pollAndStep(timeoutMilliseconds: 100)
        }
        #expect(publisher.state == .connected, "\(publisher.lastError ?? "-") \(broker.log.suffix(800))")
        #expect(try broker.retained(Self.topic + "/status")?.contains("\"online\":true") == true)

        var batch = CommitBatch(profileName: "van", committedAt: MQTTPublisher.systemNow().wall)
        batch.publications = (0..<5).map { i in
            Publication(kind: .transition, topic: Self.topic + "/event",
                        payload: #"{"_type":"transition","acc":8,"desc":"Depot","event":"enter","lat":46.31,"lon":6.94,"rid":"depot","t":"c","tid":"vn","tst":\#(1_700_000_000 + i),"wtst":1700000000}"#,
                        retain: false, time: UTCTime(millisecondsSince1970: Int64(1_700_000_000_000 + i)))
        }
        _ = try store.commit(batch)
        publisher.poke()
        // One step sends the window; the acknowledgements are not read before the stop.
        publisher.step(now: MQTTPublisher.systemNow())
        publisher.close(now: MQTTPublisher.systemNow())

        let status = try broker.retained(Self.topic + "/status")
        #expect(status?.hasPrefix("{\"_type\":\"lwt\"") == true, "\(status ?? "nothing retained")")
        // Nothing was marked published that the broker had not acknowledged.
        #expect(try store.outbox.pendingPublicationCount() == 5)
    }
}
