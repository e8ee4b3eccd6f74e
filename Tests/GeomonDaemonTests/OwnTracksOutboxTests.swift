import GeomonCore
import GeomonDaemon
import GeomonStore
import GeomonTestSupport
import Testing

/// The MQTT outbox across a reload: a stay under way when a server replaced its waypoint
/// leaves with the `wtst` its enter carried, so the server matches the leave to the waypoint
/// the device entered; the next enter carries the new waypoint's.
struct OwnTracksOutboxTests {
    static func profile(waypointTime: Int64) -> Profile {
        var profile = Profile(name: "van", mode: .continuous)
        var fence = Fence(id: "depot", shape: .circle(center: Coordinate(latitude: 47, longitude: 8), radiusMeters: 100))
        fence.waypointTime = waypointTime
        profile.fences = [fence]
        profile.publish.mqtt = MQTTSettings(host: "broker", topic: "owntracks/geomon/van")
        return profile
    }

    static func event(_ kind: EventKind, at seconds: Int64) -> GeoEvent {
        GeoEvent(id: "\(kind.rawValue)\(seconds)", kind: kind, fenceID: "depot", time: UTCTime(millisecondsSince1970: seconds * 1000),
                 coordinate: Coordinate(latitude: 47, longitude: 8), accuracyMeters: 5, rule: .recorded("t"))
    }

    @Test func aLeaveAfterTheWaypointWasReplacedCarriesItsEntersTime() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        let outbox = OwnTracksOutbox(profile: Self.profile(waypointTime: 1_600_000_000), store: store)
        func transitions(_ event: GeoEvent, inside: [String]) -> [String] {
            var commit = Monitor.Commit()
            commit.events = [event]
            commit.inside = inside
            var batch = CommitBatch(profileName: "van", committedAt: event.time)
            outbox.add(commit, to: &batch, events: 0..<1)
            return batch.publications.filter { $0.kind == .transition }.map(\.payload)
        }
        #expect(transitions(Self.event(.enter, at: 1000), inside: ["depot"]).first?.contains(#""wtst":1600000000"#) == true)
        // The server replaces the waypoint (a new tst) while the device is inside.
        outbox.reload(Self.profile(waypointTime: 1_700_000_000), store: store)
        let leave = transitions(Self.event(.exit, at: 2000), inside: [])
        #expect(leave.first?.contains(#""event":"leave""#) == true && leave.first?.contains(#""wtst":1600000000"#) == true, "\(leave)")
        let enter = transitions(Self.event(.enter, at: 3000), inside: ["depot"])
        #expect(enter.first?.contains(#""wtst":1700000000"#) == true, "\(enter)")
    }
}
