import GeomonConfig
import GeomonCore
import Testing

/// What a topic the profile left gets: leaves for the regions its consumers were last told the
/// device is in, then its retained messages cleared, the base topic last.
struct OwnTracksRetirementTests {
    static func message(_ kind: Publication.Kind, _ topic: String, _ payload: String, at seconds: Int64) -> Publication {
        Publication(kind: kind, topic: topic, payload: payload, retain: kind != .transition, time: UTCTime(millisecondsSince1970: seconds * 1000))
    }

    @Test func theRegionsStillEnteredAreLeftAtTheLastPositionThenTheRetainedMessagesCleared() {
        let t = "owntracks/ann/phone"
        let history = [
            Self.message(.waypoints, t + "/waypoints", #"{"_type":"waypoints","waypoints":[]}"#, at: 1_900_000_000),
            Self.message(.transition, t + "/event", #"{"_type":"transition","acc":5,"desc":"Home","event":"enter","lat":47.1,"lon":8.1,"rid":"home","t":"c","tid":"ph","tst":1000,"wtst":1234}"#, at: 1000),
            Self.message(.transition, t + "/event", #"{"_type":"transition","acc":5,"desc":"Work","event":"enter","lat":47.2,"lon":8.2,"rid":"work","t":"c","tid":"ph","tst":1100,"wtst":1500}"#, at: 1100),
            Self.message(.transition, t + "/event", #"{"_type":"transition","acc":5,"desc":"Work","event":"leave","lat":47.3,"lon":8.3,"rid":"work","t":"c","tid":"ph","tst":1200,"wtst":1500}"#, at: 1200),
            // A location consumer was last told "Home" and "Shop" (a fence whose enter was not published).
            Self.message(.location, t, #"{"_type":"location","acc":7,"inregions":["Home","Shop"],"inrids":["home","shop"],"lat":47.4,"lon":8.4,"t":"t","tid":"ph","tst":1300}"#, at: 1300),
            Self.message(.location, t, "not JSON", at: 1301),
        ]
        let out = OwnTracksRetirement.messages(retiring: t, history: history)
        #expect(out.map(\.kind) == [.transition, .transition, .clear, .clear, .clear])
        #expect(out[2...].map(\.topic) == [t + "/status", t + "/waypoints", t])
        #expect(out[0].topic == t + "/event" && !out[0].retain)
        #expect(out[0].payload == #"{"_type":"transition","acc":7,"desc":"Home","event":"leave","geomon":{"retired":true},"lat":47.4,"lon":8.4,"rid":"home","t":"c","tid":"ph","tst":1301,"wtst":1234}"#)
        #expect(out[1].payload.contains(#""desc":"Shop","event":"leave""#))
        #expect(out[1].payload.contains(#""rid":"shop""#))
        // The waypoints' clear first; the base topic's last marks the topic retired.
        #expect(out[3] == Publication(kind: .clear, topic: t + "/waypoints", payload: "", retain: true, time: UTCTime(millisecondsSince1970: 1_301_000)))
        #expect(out[4] == Publication(kind: .clear, topic: t, payload: "", retain: true, time: UTCTime(millisecondsSince1970: 1_301_000)))
        // The same messages, the same bytes.
        #expect(OwnTracksRetirement.messages(retiring: t, history: history) == out)
    }

    @Test func aTopicThatHeardNoRegionOnlyGetsItsRetainedMessagesCleared() {
        let t = "owntracks/ann/old"
        let left = OwnTracksRetirement.messages(retiring: t, history: [
            Self.message(.transition, t + "/event", #"{"_type":"transition","acc":5,"desc":"Home","event":"enter","lat":47.1,"lon":8.1,"rid":"home","tst":1000}"#, at: 1000),
            Self.message(.transition, t + "/event", #"{"_type":"transition","acc":5,"desc":"Home","event":"leave","lat":47.1,"lon":8.1,"rid":"home","tst":1010}"#, at: 1010),
            Self.message(.location, t, #"{"_type":"location","acc":5,"lat":47.1,"lon":8.1,"tst":1020}"#, at: 1020),
        ])
        // A location's regions are the whole set: a leave after it (a stay closed without a
        // fix of its own) takes its region out again.
        let after = OwnTracksRetirement.messages(retiring: t, history: [
            Self.message(.location, t, #"{"_type":"location","acc":5,"inregions":["Home"],"inrids":["home"],"lat":47.1,"lon":8.1,"tst":1000}"#, at: 1000),
            Self.message(.transition, t + "/event", #"{"_type":"transition","acc":5,"desc":"Home","event":"leave","lat":47.1,"lon":8.1,"rid":"home","tst":1010}"#, at: 1010),
        ])
        #expect(after.allSatisfy { $0.kind == .clear })
        #expect(left.map(\.topic) == [t + "/status", t + "/waypoints", t])
        #expect(left.allSatisfy { $0.kind == .clear && $0.payload.isEmpty && $0.retain && $0.time == UTCTime(millisecondsSince1970: 1_020_000) })
    }
}
