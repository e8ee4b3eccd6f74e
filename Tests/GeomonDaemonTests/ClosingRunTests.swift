import Foundation
import GeomonCore
@testable import GeomonDaemon
import GeomonSources
import GeomonStore
import GeomonTestSupport
import Testing

/// `geomon run` on a manual clock: whatever stops a fence being watched while the device is
/// inside reaches the hooks as an exit saying why — a reload that renames or drops the fence,
/// a restart on an edited profile — and only once, whatever restarts follow.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClosingRunTests {
    typealias L = LiveDaemonClockTests

    /// Walks into "home" (a 100 m circle at 0°, 0°) over a minute and stays at its centre.
    static func walkInAndStay() -> [Fix] {
        (0...240).map { s in
            Fix(time: UTCTime(millisecondsSince1970: 1_800_000_000_000 + Int64(s) * 1000),
                coordinate: Coordinate(latitude: 0, longitude: max(0, 300 - Double(s) * 5) / 111_195.08), horizontalAccuracyMeters: 5)
        }
    }

    static func profile(dir: TemporaryDirectory, fences: String) throws -> String {
        _ = try dir.write("log.sh", "#!/bin/sh\n{ cat; echo; } >> \"\(dir.path("events"))\"\n", mode: 0o755)
        return """
            version: 1
            name: closing
            mode: regions
            sources:
              gnss: {plugin: gpsd}
            policy: {max_speed: 45m/s, receiver: {ttff_hot: 2s}}
            hooks:
              enter: [{exec: ["./log.sh"], timeout: 5s}]
              exit: [{exec: ["./log.sh"], timeout: 5s}]
            fences:
            \(fences)
            """
    }

    static let home = "  - {id: home, name: Home, circle: {lat: 0, lon: 0, radius: 100m}}"
    static let far = "  - {id: far, circle: {lat: 1, lon: 1, radius: 100m}}"

    /// The events the hook received: (event, fence, fence_name, rule).
    static func delivered(_ dir: TemporaryDirectory) throws -> [[String]] {
        guard let text = try? String(contentsOfFile: dir.path("events"), encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { line in
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return [o["event"] as? String ?? "", o["fence"] as? String ?? "", o["fence_name"] as? String ?? "", o["rule"] as? String ?? ""]
        }
    }

    static func daemon(_ dir: TemporaryDirectory, _ yaml: String, _ lines: L.Lines, _ clock: ManualClock, _ feed: ModelFeed) throws -> LiveDaemon {
        try L.daemon(profileYAML: yaml, in: dir, lines: lines, clock: clock, gnss: feed)
    }

    @Test func aReloadThatRenamesOrDropsTheFenceTheDeviceIsInReportsItsExit() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let lines = L.Lines()
        let track = Self.walkInAndStay()
        let clock = ManualClock(wall: track[0].time)
        let feed = ModelFeed(track: track, settings: ReceiverSettings())
        let daemon = try Self.daemon(dir, try Self.profile(dir: dir, fences: Self.home), lines, clock, feed)
        let startMicros = clock.monotonicMicroseconds
        feed.now = { track[0].time + .microseconds(clock.monotonicMicroseconds - startMicros) }
        try daemon.begin()
        try L.drive(daemon, feed, clock, seconds: 70)
        daemon.waitForHooks(timeout: .seconds(10))
        #expect(try Self.delivered(dir).map { $0[0] + " " + $0[2] } == ["enter Home"])
        // Renamed: the stay in "Home" is closed, and "Zuhause" is entered by the next fixes.
        _ = try dir.write("p.yaml", try Self.profile(dir: dir, fences: Self.home.replacingOccurrences(of: "name: Home", with: "name: Zuhause")))
        daemon.requestReload()
        try L.drive(daemon, feed, clock, seconds: 30)
        daemon.waitForHooks(timeout: .seconds(10))
        var events = try Self.delivered(dir)
        #expect(events.map { $0[0] + " " + $0[2] } == ["enter Home", "exit Home", "enter Zuhause"])
        #expect(events[1][3].hasPrefix("exit: the fence was replaced (renamed, moved or resized) while inside"))
        // Dropped: its exit, with the name consumers entered.
        _ = try dir.write("p.yaml", try Self.profile(dir: dir, fences: Self.far))
        daemon.requestReload()
        try L.drive(daemon, feed, clock, seconds: 30)
        daemon.waitForHooks(timeout: .seconds(10))
        events = try Self.delivered(dir)
        #expect(events.map { $0[0] + " " + $0[2] } == ["enter Home", "exit Home", "enter Zuhause", "exit Zuhause"])
        #expect(events[3][3].hasPrefix("exit: the fence was removed while inside"))
        #expect(daemon.machine.engine.insideFenceIDs.isEmpty)
        _ = daemon.finish(code: 0)
    }

    @Test func aRestartOnAnEditedProfileClosesTheStayOnce() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let track = Self.walkInAndStay()
        let clock = ManualClock(wall: track[0].time)
        let feed = ModelFeed(track: track, settings: ReceiverSettings())
        // Each run in a function of its own: its instance lock goes with it.
        // The first run ends as kill -9 ends it: no shutdown, no last commit.
        func run(_ fences: String, seconds: Double, first: Bool = false) throws {
            let daemon = try Self.daemon(dir, try Self.profile(dir: dir, fences: fences), L.Lines(), clock, feed)
            if first {
                let startMicros = clock.monotonicMicroseconds
                feed.now = { track[0].time + .microseconds(clock.monotonicMicroseconds - startMicros) }
            }
            try daemon.begin()
            try L.drive(daemon, feed, clock, seconds: seconds)
            daemon.waitForHooks(timeout: .seconds(10))
            if !first { _ = daemon.finish(code: 0) }
        }
        try run(Self.home, seconds: 70, first: true)
        // The fence is gone from the file when geomon starts again, twice.
        try run(Self.far, seconds: 5)
        try run(Self.far, seconds: 5)
        let events = try Self.delivered(dir)
        #expect(events.map { $0[0] + " " + $0[1] } == ["enter home", "exit home"])
        let store = try EventStore(path: dir.path("d.db"), readOnly: true)
        #expect(try store.fenceStates().isEmpty)
        #expect(try store.eventLog.events(limit: 10).map(\.event.kind) == [.enter, .exit])
    }

    /// A profile moved to another `publish.mqtt.topic` is, to the consumers of the old one,
    /// a device that went away: they see it leave the region it is in, and the broker forgets
    /// the location and waypoints it kept there (Home Assistant would show it at home for
    /// ever). Once: a restart on the new topic tells the old one nothing more.
    @Test(.enabled(if: MosquittoBroker.shouldRun, "mosquitto not installed"))
    func aProfileMovedToAnotherTopicLeavesTheOldOneEmpty() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("mqtt.secret", "s3cret\n", mode: 0o600)
        let recorder = try broker.subscribe("owntracks/#")
        defer { recorder.stop() }
        let (a, b) = ("owntracks/cl/a", "owntracks/cl/b")
        func yaml(_ topic: String) throws -> String {
            try Self.profile(dir: dir, fences: Self.home) + """

                publish:
                  mqtt: {host: 127.0.0.1, port: \(broker.port), username: geomon, password_file: mqtt.secret, topic: \(topic), tracker_id: cl, locations: all}

                """
        }
        let track = Self.walkInAndStay()
        let clock = ManualClock(wall: track[0].time)
        let feed = ModelFeed(track: track, settings: ReceiverSettings())
        let lines = L.Lines()
        // In a scope of its own: its instance lock goes with it.
        do {
            let daemon = try Self.daemon(dir, try yaml(a), lines, clock, feed)
            let startMicros = clock.monotonicMicroseconds
            feed.now = { track[0].time + .microseconds(clock.monotonicMicroseconds - startMicros) }
            try daemon.begin()
            try L.drive(daemon, feed, clock, seconds: 70)
            let entered = try waitUntil(within: .seconds(10)) {
                try daemon.runUntilIdle()
                return recorder.messages.contains { $0.topic == a + "/event" && $0.payload.contains(#""event":"enter""#) }
            }
            #expect(entered, "\(lines.all.suffix(30).joined(separator: "\n"))")
            #expect(try broker.retained(a)?.contains(#""inrids":["home"]"#) == true)
            #expect(try broker.retained(a + "/waypoints") != nil)

            _ = try dir.write("p.yaml", try yaml(b))
            daemon.requestReload()
            try L.drive(daemon, feed, clock, seconds: 10)
            let cleared = try waitUntil(within: .seconds(10)) {
                try daemon.runUntilIdle()
                return recorder.messages.contains { $0.topic == a && $0.payload.isEmpty }
            }
            #expect(cleared, "\(lines.all.suffix(30).joined(separator: "\n"))")
            // After the enter on the old topic: its leave, then the retained messages cleared.
            let old = recorder.messages.filter { $0.topic.hasPrefix(a) }
            let enter = try #require(old.lastIndex { $0.topic == a + "/event" && $0.payload.contains(#""event":"enter""#) })
            // (Its status went offline as the old connection closed, and its locations came before.)
            let after = old[(enter + 1)...].filter { !($0.topic == a && !$0.payload.isEmpty) && !($0.topic == a + "/status" && !$0.payload.isEmpty) }
            #expect(after.map(\.topic) == [a + "/event", a + "/status", a + "/waypoints", a], "\(after)")
            #expect(after.first?.payload.contains(#""desc":"Home","event":"leave","geomon":{"retired":true}"#) == true)
            #expect(after.dropFirst().allSatisfy { $0.payload.isEmpty })
            #expect(try broker.retained(a) == nil)
            #expect(try broker.retained(a + "/waypoints") == nil)
            #expect(try broker.retained(a + "/status") == nil)
            #expect(lines.count("MQTT topic no longer published") == 1)
            // The new topic has the device, inside.
            #expect(try waitUntil(within: .seconds(10)) {
                try daemon.runUntilIdle()
                return try broker.retained(b)?.contains(#""inrids":["home"]"#) == true
            })
            _ = daemon.finish(code: 0)
        }

        // A restart on the new topic: nothing more for the old one.
        let rowsOnA = { () throws -> Int in
            try EventStore(path: dir.path("d.db"), readOnly: true).outbox.publications(includingPublished: true, limit: 10_000)
                .count { $0.publication.topic.hasPrefix(a) }
        }
        let before = try rowsOnA()
        do {
            let again = try Self.daemon(dir, try yaml(b), L.Lines(), clock, feed)
            try again.begin()
            try L.drive(again, feed, clock, seconds: 5)
            _ = again.finish(code: 0)
        }
        #expect(try rowsOnA() == before)

        // Edited while stopped: the next start leaves the topic the last run published on.
        let c = "owntracks/cl/c"
        let last = L.Lines()
        let edited = try Self.daemon(dir, try yaml(c), last, clock, feed)
        try edited.begin()
        try L.drive(edited, feed, clock, seconds: 5)
        #expect(try waitUntil(within: .seconds(10)) {
            try edited.runUntilIdle()
            return recorder.messages.contains { $0.topic == b && $0.payload.isEmpty }
        })
        #expect(recorder.messages.contains { $0.topic == b + "/event" && $0.payload.contains(#""event":"leave","geomon":{"retired":true}"#) })
        #expect(try broker.retained(b) == nil)
        #expect(last.count("MQTT topic no longer published") == 1)
        _ = edited.finish(code: 0)
        #expect(try rowsOnA() == before)
    }
}
