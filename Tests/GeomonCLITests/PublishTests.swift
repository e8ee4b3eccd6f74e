import Foundation
import GeomonCore
import GeomonTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `publish.mqtt` against a real mosquitto started by the test, recorded by `mosquitto_sub`.
@Suite(.serialized, .enabled(if: MosquittoBroker.shouldRun, "mosquitto not installed"))
struct PublishTests {
    static let track = TestSupport.fixture("replay/swiss-drive.jsonl").path
    static let topic = "owntracks/geomon/van"

    /// The swiss-drive replay profile (51 circles along a real drive) with a `publish.mqtt`.
    static func profile(in dir: TemporaryDirectory, port: UInt16, mqtt extra: [String: Any] = [:], password: String = "s3cret") throws -> String {
        var text = try String(contentsOf: TestSupport.fixture("replay/swiss-drive.profile.yaml"), encoding: .utf8)
        text = String(text[text.firstIndex(of: "{")!...])
        var profile = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        _ = try dir.write("mqtt.secret", password + "\n", mode: 0o600)
        var mqtt: [String: Any] = ["host": "127.0.0.1", "port": Int(port), "username": "geomon", "password_file": "mqtt.secret",
                                   "topic": topic, "tracker_id": "v1"]
        for (key, value) in extra { mqtt[key] = value }
        profile["publish"] = ["mqtt": mqtt]
        let data = try JSONSerialization.data(withJSONObject: profile, options: [.sortedKeys])
        return try dir.write("profile.yaml", String(decoding: data, as: UTF8.self))
    }

    /// How many messages a replay says the broker acknowledged.
    static func acknowledged(_ stderr: String) -> Int? {
        stderr.firstMatch(of: /publish: (\d+) messages acknowledged by the broker/).flatMap { Int($0.1) }
    }

    static func json(_ payload: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
    }

    /// The events a replay printed (`--format json`), enter and exit only, as (event, fence, tst).
    static func transitions(fromEvents stdout: String) -> [String] {
        stdout.split(separator: "\n").compactMap { json(String($0)) }.compactMap { event in
            guard let type = event["type"] as? String, type == "enter" || type == "exit",
                  let fence = event["fence"] as? String, let time = event["time"] as? String else { return nil }
            return "\(type == "enter" ? "enter" : "leave") \(fence) \(time.prefix(19))"
        }
    }

    /// The transitions received, as (event, rid, tst as RFC 3339 seconds).
    static func transitions(_ messages: [MQTTRecorder.Message]) -> [String] {
        messages.filter { $0.topic == topic + "/event" }.compactMap { json($0.payload) }.compactMap { t in
            guard let event = t["event"] as? String, let rid = t["rid"] as? String, let tst = t["tst"] as? Int else { return nil }
            let date = Date(timeIntervalSince1970: TimeInterval(tst))
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return "\(event) \(rid) \(formatter.string(from: date).prefix(19))"
        }
    }

    @Test func aReplayPublishesItsTransitionsInOrderWithRetainedLocationAndWaypoints() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port)
        let recorder = try broker.subscribe("owntracks/#")
        let replay = try runGeomon(["replay", "--profile", profile, "--publish", "--format", "json", Self.track])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        let expected = Self.transitions(fromEvents: replay.stdout)
        #expect(expected.count == 95)
        #expect(replay.stderr.contains("messages acknowledged by the broker"))
        let messages = recorder.wait { Self.transitions($0).count >= expected.count && $0.last?.topic == Self.topic + "/status" }
        // The transitions are the stored events, in order, each once.
        #expect(Self.transitions(messages) == expected)

        // Every message is JSON with OwnTracks' required fields; acc always > 0.
        var locations = 0, dwells = 0
        for message in messages {
            let o = try #require(Self.json(message.payload), "not JSON: \(message.payload)")
            switch message.topic {
            case Self.topic:
                #expect(o["_type"] as? String == "location")
                #expect(o["lat"] is Double && o["lon"] is Double && o["tst"] is Int && o["tid"] as? String == "v1")
                #expect((o["acc"] as? Int ?? 0) > 0)
                #expect(["c", "t"].contains(o["t"] as? String ?? ""))
                locations += 1
                if let extra = o["geomon"] as? [String: Any] {
                    #expect(extra["event"] as? String == "dwell" && extra["rid"] is String)
                    dwells += 1
                }
            case Self.topic + "/event":
                #expect(o["_type"] as? String == "transition" && o["t"] as? String == "c")
                #expect(o["desc"] is String && o["rid"] is String && o["wtst"] is Int && (o["acc"] as? Int ?? 0) > 0)
                #expect(["enter", "leave"].contains(o["event"] as? String ?? ""))
            case Self.topic + "/waypoints":
                let waypoints = try #require(o["waypoints"] as? [[String: Any]])
                #expect(waypoints.count == 51)
                #expect(waypoints.first?["desc"] as? String == "Start" && waypoints.first?["rad"] as? Int == 150)
            case Self.topic + "/status":
                #expect(["status", "lwt"].contains(o["_type"] as? String ?? ""))
            default:
                Issue.record("unexpected topic \(message.topic)")
            }
        }
        #expect(dwells == 3)
        // significant: a location with every transition or dwell, and each significant change.
        #expect(locations >= 95 + 3)
        #expect(locations < 300, "not every fix")

        // Retained: the last location on TOPIC, the waypoints, and the offline status after the stop.
        let lastLocation = messages.last { $0.topic == Self.topic }?.payload
        #expect(try broker.retained(Self.topic) == lastLocation)
        #expect(try broker.retained(Self.topic + "/waypoints")?.contains("\"_type\":\"waypoints\"") == true)
        #expect(try broker.retained(Self.topic + "/status")?.hasPrefix("{\"_type\":\"lwt\"") == true)
        #expect(try broker.retained(Self.topic + "/event") == nil, "transitions are not retained")
    }

    @Test(arguments: ["all", "none"])
    func locationsSayWhichFixesArePublished(_ mode: String) throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port, mqtt: ["locations": mode])
        let recorder = try broker.subscribe("owntracks/#")
        let replay = try runGeomon(["replay", "--profile", profile, "--publish", "--stats", Self.track])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        // Everything the broker acknowledged, then the offline status of the clean stop.
        let acknowledged = try #require(Self.acknowledged(replay.stderr))
        let messages = recorder.wait { $0.filter { $0.topic != Self.topic + "/status" }.count >= acknowledged && $0.last?.topic == Self.topic + "/status" }
        let locations = messages.filter { $0.topic == Self.topic }.compactMap { Self.json($0.payload) }
        if mode == "none" {
            // Only the dwells, which are events.
            #expect(locations.count == 3)
            #expect(locations.allSatisfy { $0["geomon"] != nil })
        } else {
            // Every fix the engine took ("N fixes processed") within min_accuracy (50 m), plus
            // the 3 dwells.
            let processed = try #require(replay.stderr.firstMatch(of: /replay: (\d+) fixes processed/).map { Int($0.1)! })
            let poor = try String(contentsOfFile: Self.track, encoding: .utf8).split(separator: "\n")
                .compactMap { Self.json(String($0))?["accuracy_m"] as? Double }.filter { $0 > 50 }.count
            #expect(locations.count <= processed + 3 && locations.count >= processed + 3 - poor, "\(messages.count) messages")
            #expect(locations.allSatisfy { ($0["acc"] as? Int ?? 0) <= 50 }, "a fix worse than min_accuracy was published")
            let times = locations.filter { $0["geomon"] == nil }.compactMap { $0["tst"] as? Int }
            #expect(times == times.sorted(), "in fix order")
        }
    }

    /// With Home Assistant holding the zones already: no waypoints (HA would import them as
    /// zones of its own) and no status topic (HA logs every `_type: status` as unsupported).
    @Test func waypointsAndStatusCanBeLeftOut() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port, mqtt: ["waypoints": false, "status": false])
        let recorder = try broker.subscribe("owntracks/#")
        let replay = try runGeomon(["replay", "--profile", profile, "--publish", "--format", "json", Self.track])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        let expected = Self.transitions(fromEvents: replay.stdout)
        let acknowledged = try #require(Self.acknowledged(replay.stderr))
        let messages = recorder.wait { $0.count >= acknowledged }
        #expect(messages.count == acknowledged)
        #expect(Self.transitions(messages) == expected)
        let topics = Set(messages.map(\.topic))
        #expect(topics == [Self.topic, Self.topic + "/event"], "\(topics)")
        #expect(try broker.retained(Self.topic + "/waypoints") == nil)
        #expect(try broker.retained(Self.topic + "/status") == nil)
    }

    /// `--speed` paces the messages, not only the events: a consumer (Home Assistant) sees each
    /// transition when the replay decides it, over one connection, with hooks delivered beside
    /// (the profile's hooks object exists whether or not it names hooks).
    @Test func aPacedReplaysMessagesArrivePacedOverOneConnection() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port)
        let recorder = try broker.subscribe("owntracks/#")
        let speed = 1000.0
        let replay = try runGeomon(["replay", "--profile", profile, "--publish", "--speed", "\(Int(speed))", "--format", "json", Self.track])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        let expected = Self.transitions(fromEvents: replay.stdout)
        let messages = recorder.wait { Self.transitions($0).count >= expected.count && $0.last?.topic == Self.topic + "/status" }
        let events = messages.filter { $0.topic == Self.topic + "/event" }
        #expect(events.count == expected.count)
        let tst = events.compactMap { Self.json($0.payload)?["tst"] as? Int }
        let first = try #require(events.first), last = try #require(events.last)
        let recordedSpan = Double(try #require(tst.last) - (try #require(tst.first))) / speed
        #expect(recordedSpan > 5)
        // Arrival follows the recording's pace: spread over the replay, not at its end.
        #expect(last.receivedAt - first.receivedAt > 0.8 * recordedSpan, "\(last.receivedAt - first.receivedAt) s for \(recordedSpan) s")
        // Each within 3 s of its pace after the one before: a batched send holds every message
        // of a batch back until its last, by up to the whole span (over 5 s). Measured against
        // the message before, not the first: a debug build sharing two cores with the parallel
        // suite falls behind 1000× steadily, by more than 3 s by the end of the run on a loaded
        // machine, which is the host's speed, not a batch.
        let offsets = zip(events, tst).map { message, time in message.receivedAt - Double(time - tst[0]) / speed }
        for (k, (before, after)) in zip(offsets, offsets.dropFirst()).enumerated() {
            #expect(abs(after - before) < 3, "\(events[k + 1].payload) arrived \(after - before) s off its pace after the one before")
        }
        // One connection: online once at the start, the will (offline) only after the end.
        let statuses = messages.filter { $0.topic == Self.topic + "/status" }.compactMap { Self.json($0.payload)?["_type"] as? String }
        #expect(statuses.filter { $0 == "lwt" }.count == 1 && statuses.last == "lwt", "\(statuses)")
        #expect(!broker.log.contains("exceeded timeout"), "the broker dropped geomon")
    }

    /// With `locations: all`, a paced replay sends each location within its commit cadence
    /// (1 s of the replay's clock, as `geomon run`), not in batches of up to 64 timed by the
    /// host's clock.
    @Test func aPacedReplaysLocationsAreNotBurst() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port, mqtt: ["locations": "all"])
        // The drive's first 240 fixes (4 minutes at 1 Hz), 8 s at --speed 30.
        let lines = try String(contentsOfFile: Self.track, encoding: .utf8).split(separator: "\n").prefix(240)
        let track = try dir.write("start.jsonl", lines.joined(separator: "\n") + "\n")
        let recorder = try broker.subscribe(Self.topic)
        let speed = 30.0
        let replay = try runGeomon(["replay", "--profile", profile, "--publish", "--always-on", "--speed", "\(Int(speed))", track])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        let locations = recorder.wait { $0.count >= 200 }.filter { Self.json($0.payload)?["_type"] as? String == "location" }
        #expect(locations.count >= 200)
        // Each arrival against the recording's pace, within every run of 64 consecutive
        // locations (the batch a burst would send at once, 2.1 s of the recording at this
        // speed): none is later than the earliest of its run by more than 1 s. A batch of 64
        // holds its first location back 2.1 s; the replay falling behind steadily on a loaded
        // machine (1.5 s over the whole run) is the host's speed, not a burst.
        let offsets = locations.compactMap { m in (Self.json(m.payload)?["tst"] as? Int).map { m.receivedAt - Double($0) / speed } }
        let window = 64
        let lateness = (0...max(0, offsets.count - window)).map { start in
            let run = offsets[start..<min(offsets.count, start + window)]
            return (run.max() ?? 0) - (run.min() ?? 0)
        }.max() ?? 0
        #expect(lateness < 1.0, "a location arrived \(lateness) s behind the recording's pace within 64 locations")
    }

    /// A broker whose ACL denies geomon the location topic: with MQTT 5 (the default) the
    /// PUBACK says so; those messages are kept as refused (a dead letter with the reason), logged
    /// and counted, the transitions still go; with MQTT 3.1.1 the same refusals look acknowledged.
    @Test func refusedPublishesAreKeptAsRefusedWithTheBrokersReason() throws {
        let acl = "user geomon\ntopic write \(Self.topic)/event\ntopic write \(Self.topic)/status\ntopic write \(Self.topic)/waypoints\nuser recorder\ntopic read #\n"
        let broker = try MosquittoBroker(acl: acl)
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port)
        let db = dir.path("r.db")
        let replay = try runGeomon(["replay", "--profile", profile, "--publish", "--db", db, Self.track])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("MQTT broker refused messages") && replay.stderr.contains("reason=\"Not authorized (0x87)\""), "\(replay.stderr)")
        let listed = try runGeomon(["publish", "list", "--db", db, "--format", "json", "--limit", "10000"])
        let rows = listed.stdout.split(separator: "\n").compactMap { Self.json(String($0)) }
        let refused = rows.filter { $0["refused"] != nil }
        #expect(!refused.isEmpty && refused.allSatisfy { $0["kind"] as? String == "location" && $0["refused"] as? String == "Not authorized (0x87)" },
                "\(listed.stdout.prefix(2000))")
        let status = try runGeomon(["status", "--db", db, "--format", "json"])
        #expect((Self.json(status.stdout)?["refused_messages"] as? Int) == refused.count, "\(status.stdout)")
        #expect((Self.json(status.stdout)?["pending_messages"] as? Int) == 0, "\(status.stdout)")

        // MQTT 3.1.1: the broker drops them and acknowledges all the same.
        let old = try Self.profile(in: dir, port: broker.port, mqtt: ["protocol": "3.1.1"])
        let db311 = dir.path("r311.db")
        #expect(try runGeomon(["replay", "--profile", old, "--publish", "--db", db311, Self.track]).exitCode == 0)
        let status311 = try runGeomon(["status", "--db", db311, "--format", "json"])
        #expect((Self.json(status311.stdout)?["refused_messages"] as? Int) == 0, "\(status311.stdout)")
    }

    /// A broker restarted without persistence loses geomon's session and its retained
    /// messages: on connecting without a session, geomon publishes its last retained ones again
    /// (a late subscriber finds the waypoints and the last location).
    @Test func aBrokerThatLostTheSessionGetsTheRetainedMessagesAgain() throws {
        let broker = try MosquittoBroker(persistence: false)
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port)
        let db = dir.path("r.db")
        #expect(try runGeomon(["replay", "--profile", profile, "--publish", "--db", db, Self.track]).exitCode == 0)
        let waypoints = try broker.retained(Self.topic + "/waypoints")
        let location = try broker.retained(Self.topic)
        #expect(waypoints != nil && location != nil)
        broker.stop()
        try broker.start()
        #expect(try broker.retained(Self.topic + "/waypoints") == nil)
        // The same database again: nothing new to decide, but the session is gone.
        let again = try runGeomon(["replay", "--profile", profile, "--publish", "--db", db, Self.track])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(try broker.retained(Self.topic + "/waypoints") == waypoints)
        #expect(try broker.retained(Self.topic) == location)
    }

    /// A message larger than the broker takes is refused, and the messages after it go out:
    /// the outbox is not held up by one message, nor the connection dropped and retried every
    /// second. MQTT 5: geomon refuses it itself (the broker's maximum packet size, told in the
    /// CONNACK). MQTT 3.1.1: the broker closes the connection each time it arrives; after three
    /// such drops with it alone in flight it is refused.
    @Test(arguments: ["5", "3.1.1"])
    func aMessageLargerThanTheBrokerTakesIsRefusedAndTheRestGoOut(version: String) throws {
        let broker = try MosquittoBroker(config: "max_packet_size 1500")
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port, mqtt: ["protocol": version])
        let db = dir.path("r.db")
        let recorder = try broker.subscribe(Self.topic + "/#")
        defer { recorder.stop() }
        let replay = try runGeomon(["replay", "--profile", profile, "--publish", "--format", "json", "--db", db, Self.track])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("MQTT broker refused messages") && replay.stderr.contains("waypoints"), "\(replay.stderr)")
        if version == "5" {
            #expect(!replay.stderr.contains("MQTT broker unavailable"), "\(replay.stderr)")
        } else {
            #expect(replay.stderr.contains("closed the connection each time"), "\(replay.stderr)")
        }
        let expected = Self.transitions(fromEvents: replay.stdout)
        let messages = recorder.wait { Self.transitions($0).count >= expected.count }
        #expect(!expected.isEmpty && Self.transitions(messages) == expected)
        let listed = try runGeomon(["publish", "list", "--db", db, "--format", "json", "--limit", "10000"])
        let refused = listed.stdout.split(separator: "\n").compactMap { Self.json(String($0)) }.filter { $0["refused"] != nil }
        #expect(refused.count == 1 && refused.first?["kind"] as? String == "waypoints", "\(listed.stdout.prefix(2000))")
        let status = try runGeomon(["status", "--db", db, "--format", "json"])
        #expect((Self.json(status.stdout)?["pending_messages"] as? Int) == 0, "\(status.stdout)")
    }

    /// A lost session requeues what the profile publishes now: a topic it no longer uses is
    /// not given its retained messages back (a ghost device, zones imported twice).
    @Test func aLostSessionRequeuesOnlyTheTopicsTheProfilePublishesNow() throws {
        let broker = try MosquittoBroker(persistence: false)
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = dir.path("r.db")
        #expect(try runGeomon(["replay", "--profile", try Self.profile(in: dir, port: broker.port), "--publish", "--db", db, Self.track]).exitCode == 0)
        let location = try broker.retained(Self.topic)
        let waypoints = try broker.retained(Self.topic + "/waypoints")
        #expect(location != nil && waypoints != nil)
        broker.stop()
        try broker.start()
        // The same database under a new topic, without waypoints: the broker has no session.
        let moved = try Self.profile(in: dir, port: broker.port, mqtt: ["topic": Self.topic + "-2", "waypoints": false])
        let again = try runGeomon(["replay", "--profile", moved, "--publish", "--db", db, Self.track])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(try broker.retained(Self.topic) == nil)
        #expect(try broker.retained(Self.topic + "/waypoints") == nil)
        #expect(try broker.retained(Self.topic + "-2/waypoints") == nil)
        // Back on the first topic: its last location is published again.
        broker.stop()
        try broker.start()
        let back = try Self.profile(in: dir, port: broker.port)
        #expect(try runGeomon(["replay", "--profile", back, "--publish", "--db", db, Self.track]).exitCode == 0)
        #expect(try broker.retained(Self.topic) == location)
    }

    /// A replay with `commands: true` neither reads the commands the broker keeps for the
    /// daemon's session (they would be acknowledged and lost) nor throws the daemon off: it
    /// connects as a client of its own, with a clean session.
    @Test func aReplayLeavesTheDaemonsQueuedCommandsAlone() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port, mqtt: ["commands": true])
        let daemonSession = ["-h", "127.0.0.1", "-p", String(broker.port), "-u", "geomon", "-P", "s3cret",
                             "-i", "geomon-swiss-drive", "-c", "-q", "1", "-t", Self.topic + "/cmd"]
        // The daemon's persistent session, subscribed, then away; a command waits in it.
        let subscribed = try runProcess(URL(fileURLWithPath: "/usr/bin/timeout"), ["-s", "KILL", "30", "/usr/bin/mosquitto_sub"] + daemonSession + ["-E"])
        #expect(subscribed.exitCode == 0, "\(subscribed.stderr)")
        let command = #"{"_type":"cmd","action":"reportLocation"}"#
        let sent = try runProcess(URL(fileURLWithPath: "/usr/bin/timeout"),
                                  ["-s", "KILL", "30", "/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", String(broker.port), "-u", "recorder", "-P", "r3corder",
                                   "-q", "1", "-t", Self.topic + "/cmd", "-m", command])
        #expect(sent.exitCode == 0, "\(sent.stderr)")
        let replay = try runGeomon(["replay", "--profile", profile, "--publish", "--db", dir.path("r.db"), Self.track])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        #expect(broker.log.contains("geomon-swiss-drive-replay"), "\(broker.log.suffix(2000))")
        // The daemon comes back to its session: the command is still there.
        let received = try runProcess(URL(fileURLWithPath: "/usr/bin/timeout"), ["-s", "KILL", "30", "/usr/bin/mosquitto_sub"] + daemonSession + ["-C", "1"])
        #expect(received.stdout.contains("reportLocation"), "\(received.stdout) \(received.stderr)")
    }

    @Test func aBrokerDownForAStretchOfTheTrackLosesNothing() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port)
        let recorder = try broker.subscribe("owntracks/#")
        let reference = try runGeomon(["replay", "--profile", profile, "--format", "json", Self.track])
        let expected = Self.transitions(fromEvents: reference.stdout)

        // A paced replay (about 5 s); the broker is down from 1 s to 3 s into it.
        let process = Process()
        process.executableURL = TestSupport.geomonBinary
        process.arguments = ["replay", "--profile", profile, "--publish", "--speed", "2000", "--db", dir.path("r.db"), Self.track]
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        // Down once messages flow, for 2 s of the paced replay: the outage's length is the
        // scenario, not a wait for something.
        waitUntil(within: .seconds(20)) { !recorder.messages.isEmpty }
        broker.stop()
        Thread.sleep(forTimeInterval: 2)
        try broker.start()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr)")
        // One line for the outage, not one per attempt.
        #expect(stderr.components(separatedBy: "unavailable").count - 1 == 1, "\(stderr)")
        let messages = recorder.wait { Self.transitions($0).count >= expected.count }
        var seen = Set<String>()
        let firsts = Self.transitions(messages).filter { seen.insert($0).inserted }
        #expect(firsts == expected, "everything, in order")
        // Duplicates only as QoS 1 redeliveries: identical payloads.
        let payloads = messages.filter { $0.topic == Self.topic + "/event" }.map(\.payload)
        #expect(Set(payloads).count == expected.count)
    }

    @Test func killedAtRandomInstantsNothingIsLostAndDuplicatesAreIdentical() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port)
        let recorder = try broker.subscribe(Self.topic + "/event")
        let reference = try runGeomon(["replay", "--profile", profile, "--format", "json", Self.track])
        let expected = Self.transitions(fromEvents: reference.stdout)
        // Kill times from a seed, printed: a failure can be run again with the same instants.
        let seed = UInt64.random(in: 0...UInt64.max)
        print("killedAtRandomInstants: seed \(seed)")
        var generator = SplitMix64(seed: seed)
        for _ in 0..<20 {
            let process = Process()
            process.executableURL = TestSupport.geomonBinary
            process.arguments = ["replay", "--profile", profile, "--publish", "--speed", "4000", "--db", dir.path("k.db"), Self.track]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // A kill at a random instant is the test: no condition could choose it.
            Thread.sleep(forTimeInterval: Double.random(in: 0.1...0.9, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let last = try runGeomon(["replay", "--profile", profile, "--publish", "--db", dir.path("k.db"), Self.track])
        #expect(last.exitCode == 0, "\(last.stderr)")
        let messages = recorder.wait { Set(Self.transitions($0)).count >= expected.count }
        var seen = Set<String>()
        #expect(Self.transitions(messages).filter { seen.insert($0).inserted } == expected)
        let payloads = messages.map(\.payload)
        #expect(Set(payloads).count == expected.count, "a message sent twice has the same bytes")
    }

    @Test func aWrongPasswordIsAClearErrorAndTheMessagesWait() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(in: dir, port: broker.port, password: "wrong")
        let refused = try runGeomon(["replay", "--profile", profile, "--publish", "--publish-wait", "2", "--db", dir.path("a.db"), Self.track])
        #expect(refused.exitCode == 69)
        #expect(refused.stderr.contains("Not authorized") && refused.stderr.contains("password_file"), "\(refused.stderr)")
        #expect(refused.stderr.contains("stay in \(dir.path("a.db"))"), "\(refused.stderr)")
        let recorder = try broker.subscribe(Self.topic + "/event")
        _ = try dir.write("mqtt.secret", "s3cret\n", mode: 0o600)
        let sent = try runGeomon(["replay", "--profile", profile, "--publish", "--db", dir.path("a.db"), Self.track])
        #expect(sent.exitCode == 0, "\(sent.stderr)")
        #expect(recorder.wait { $0.count >= 95 }.count == 95)
    }

    @Test func tlsWithTheBrokersCAConnectsAndAnotherCAIsAClearError() throws {
        let broker = try MosquittoBroker(tls: true)
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let port = try #require(broker.tlsPort)
        var profile = try Self.profile(in: dir, port: port, mqtt: ["host": "localhost", "tls": ["ca_file": broker.directory.path("other-ca.crt")]])
        let refused = try runGeomon(["replay", "--profile", profile, "--publish", "--publish-wait", "2", Self.track])
        #expect(refused.exitCode == 69)
        #expect(refused.stderr.contains("TLS") && refused.stderr.contains("ca_file"), "\(refused.stderr)")

        profile = try Self.profile(in: dir, port: port, mqtt: ["host": "localhost", "tls": ["ca_file": broker.caFile]])
        let recorder = try broker.subscribe(Self.topic + "/event")
        let sent = try runGeomon(["replay", "--profile", profile, "--publish", Self.track])
        #expect(sent.exitCode == 0, "\(sent.stderr)")
        #expect(recorder.wait { $0.count >= 95 }.count == 95)
    }

    @Test func badConfigurationIsReportedAtItsLine() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("open.secret", "pw\n", mode: 0o644)
        let profile = try dir.write("p.yaml", """
            version: 1
            name: van
            mode: regions
            fences:
              - {id: home, circle: {lat: 46, lon: 7, radius: 100m}}
            hooks:
              enter: [{exec: [/bin/true], env: {LD_PRELOAD: x.so, GEOMON_FENCE: y, TOKEN: z}}]
            publish:
              mqtt:
                host: broker.lan
                port: 70000
                username: van
                password_file: open.secret
                topic: owntracks/+/van
                tracker_id: toolong

            """)
        let result = try runGeomon(["validate", profile])
        #expect(result.exitCode == 65)
        let out = result.stdout + result.stderr
        #expect(out.contains("p.yaml:7:") && out.contains("'LD_PRELOAD' is refused"), "\(out)")
        #expect(out.contains("'GEOMON_FENCE' is refused"))
        #expect(out.contains("p.yaml:11:") && out.contains("'port'"), "\(out)")
        #expect(out.contains("p.yaml:13:") && out.contains("readable by others (mode 644)"), "\(out)")
        #expect(out.contains("p.yaml:14:") && out.contains("wildcards"), "\(out)")
        #expect(out.contains("p.yaml:15:") && out.contains("tracker_id"), "\(out)")

        _ = try dir.write("p2.yaml", """
            version: 1
            name: van
            mode: regions
            fences:
              - {id: home, circle: {lat: 46, lon: 7, radius: 100m}}
            publish:
              mqtt: {host: broker.lan, username: van, password_file: missing.secret, topic: "owntracks/geomon/van#"}

            """)
        let missing = try runGeomon(["validate", dir.path("p2.yaml")])
        #expect(missing.exitCode == 65)
        #expect((missing.stdout + missing.stderr).contains("password_file '\(dir.path("missing.secret"))' does not exist"), "\(missing.stdout)")
        #expect((missing.stdout + missing.stderr).contains("wildcards"))
    }
}
