import Foundation
import GeomonCore
import GeomonSources
import GeomonStore
import GeomonTestSupport
import Testing

/// `publish.mqtt.commands`: a real mosquitto, `geomon run` on a real gpsd fed a recorded drive,
/// and a fleet server played by `mosquitto_pub`. A fence pushed with `setWaypoints` fires on
/// the drive, survives `kill -9`, a restart and SIGHUP, and goes with `clearWaypoints`; what
/// is not a command geomon accepts changes nothing.
@Suite(.serialized, .enabled(if: GPSFakeHarness.shouldRun && MosquittoBroker.shouldRun), .timeLimit(.minutes(4)))
struct MQTTCommandsTests {
    typealias Daemon = RunCommandTests.Daemon
    static let topic = "owntracks/geomon/van"

    /// `mosquitto_pub` as the fleet's server (the broker's `recorder` user).
    static func publish(_ broker: MosquittoBroker, _ payload: String, topic: String = topic + "/cmd", retain: Bool = false) throws {
        // A bound for a publish that hangs, not a speed: a loaded machine (the whole suite on
        // two cores) has taken more than 5 s to connect and publish.
        var arguments = ["-s", "KILL", "30", "/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", String(broker.port), "-u", "recorder", "-P", "r3corder",
                         "-q", "1", "-t", topic]
        if retain { arguments.append("-r") }
        arguments += payload.isEmpty ? ["-n"] : ["-s"]
        let result = try runProcess(URL(fileURLWithPath: "/usr/bin/timeout"), arguments, stdin: payload)
        #expect(result.exitCode == 0, "mosquitto_pub: \(result.stderr)")
    }

    static func setWaypoints(_ waypoints: [(desc: String, rid: String, at: Coordinate, rad: Int)]) -> String {
        let items = waypoints.map { w in
            #"{"_type":"waypoint","desc":"\#(w.desc)","lat":\#(w.at.latitude),"lon":\#(w.at.longitude),"rad":\#(w.rad),"rid":"\#(w.rid)","tst":1710104383}"#
        }
        return #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[\#(items.joined(separator: ","))]}}"#
    }

    static func count(_ text: String, in log: String) -> Int { log.components(separatedBy: text).count - 1 }

    /// The van's profile: the depot, commands accepted from the broker, no location stream.
    static func vanProfile(_ dir: TemporaryDirectory, broker: MosquittoBroker, initial: String = "silent") throws -> String {
        _ = try dir.write("password", "s3cret\n", mode: 0o600)
        return try dir.write("van.yaml", """
            version: 1
            name: van
            mode: regions
            sources:
              gnss: {plugin: gpsd, min_accuracy: 100m}
            transitions: {confirm: 1, hysteresis: 5m, initial: \(initial)}
            fences:
              - id: depot
                circle: {lat: 46.0, lon: 7.0, radius: 200m}
            publish:
              mqtt:
                host: 127.0.0.1
                port: \(broker.port)
                username: geomon
                password_file: password
                topic: \(Self.topic)
                commands: true
                locations: none

            """)
    }

    @Test func pushedFencesFireSurviveRestartsAndClear() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // The drive's moving minute (it starts standing, 80 s in): a stop 50 m around where it
        // is 28 s later is entered and left while it plays.
        let text = try String(contentsOf: RunCommandTests.shortSwiss, encoding: .isoLatin1)
        let lines = text.split(whereSeparator: \.isNewline)
        let times = lines.enumerated().compactMap { k, line -> (Int, Double)? in
            let f = line.split(separator: ",", omittingEmptySubsequences: false)
            guard line.hasPrefix("$GPRMC"), f.count > 1, f[1].count >= 6, let h = Double(f[1].prefix(2)), let m = Double(f[1].dropFirst(2).prefix(2)),
                  let sec = Double(f[1].dropFirst(4)) else { return nil }
            return (k, h * 3600 + m * 60 + sec)
        }
        let cut = try #require(times.first { $0.1 >= times[0].1 + 80 }).0
        let moving = dir.url.appendingPathComponent("moving.nmea")
        try lines[cut...].joined(separator: "\n").write(to: moving, atomically: true, encoding: .isoLatin1)
        let gpsd = try PacedGPSD(log: moving, seconds: 60)
        defer { gpsd.stop() }
        let served = dir.url.appendingPathComponent("served.nmea")
        try gpsd.writeServedLog(to: served)
        let fixes = try TrackReader.read(path: served.path).fixes
        let stop = try #require(fixes.first { $0.time >= fixes[0].time + .seconds(28) }).coordinate
        let profile = try Self.vanProfile(dir, broker: broker)
        let recorder = try broker.subscribe(Self.topic)
        defer { recorder.stop() }
        let db = dir.path("van.db")
        let arguments = ["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(gpsd.port)", "--always-on", "--print-events", "--log-level", "info"]
        var daemon = try Daemon(arguments, in: dir)
        #expect(daemon.waitForLog("MQTT commands subscribed"), "\(daemon.stderr)")

        // What is not a command geomon accepts: refused or ignored, one log line each.
        try Self.publish(broker, #"{"_type":"cmd","action":"setConfiguration","configuration":{"_type":"configuration","host":"evil.example"}}"#)
        #expect(daemon.waitForLog("action=setConfiguration"), "\(daemon.stderr)")
        try Self.publish(broker, Self.setWaypoints([("Elsewhere", "other-1", stop, 150)]), topic: "owntracks/geomon/other/cmd")
        try Self.publish(broker, #"{"_type":"cmd","action":"setWaypoints","waypoints":[\#(String(repeating: " ", count: 70_000))]}"#)
        #expect(daemon.waitForLog("more than the 65536 a command may have"))
        #expect(Self.count("MQTT command refused", in: daemon.stderr) == 2)
        #expect(!daemon.stderr.contains("MQTT command accepted"))

        // The server pushes the stop (and tries to replace the profile's depot: left out).
        try Self.publish(broker, Self.setWaypoints([("Stop", "stop-1", stop, 50), ("Not the depot", "depot", stop, 500)]))
        #expect(daemon.waitForLog("pushed fences changed"), "\(daemon.stderr)")
        #expect(daemon.stderr.contains("'depot' is a fence of the profile"))
        // The acknowledgement: the retained waypoints hold the pushed fence beside the depot.
        var waypoints = ""
        try waitUntil(within: .seconds(10), every: .milliseconds(200)) {
            waypoints = try broker.retained(Self.topic + "/waypoints") ?? ""
            return waypoints.contains("stop-1")
        }
        #expect(waypoints.contains(#""rid":"stop-1""#) && waypoints.contains(#""rid":"depot""#), "\(waypoints)")
        #expect(!waypoints.contains("other-1"))

        // The drive passes the stop: enter, then exit; a reportLocation is answered meanwhile.
        gpsd.start()
        #expect(daemon.waitForLog("gnss", timeout: 20))
        // Answered either way: with the last fix when it is fresh, else with the next one.
        try Self.publish(broker, #"{"_type":"cmd","action":"reportLocation"}"#)
        let reported = recorder.wait(timeout: .seconds(8)) { messages in
            messages.contains { $0.topic == Self.topic && $0.payload.contains(#""t":"r""#) }
        }
        #expect(reported.contains { $0.topic == Self.topic && $0.payload.contains(#""t":"r""#) }, "no location answered the reportLocation: \(daemon.stderr.suffix(2000))")
        try waitUntil(within: .seconds(gpsd.duration + 20), every: .milliseconds(200)) {
            try gpsd.finished && RunCommandTests.events(daemon.stdout).filter { $0.fence == "stop-1" }.count >= 2
        }
        let events = try RunCommandTests.events(daemon.stdout)
        #expect(events.filter { $0.fence == "stop-1" }.map(\.type) == ["enter", "exit"], "\(daemon.stdout)\n\(daemon.stderr.suffix(3000))")

        // kill -9 and start again: the pushed fence is still monitored, and after SIGHUP too. A
        // command sent while geomon was down arrives when it is back (the broker kept it for
        // the persistent session); its copy left retained on the broker comes with the
        // subscription and is ignored.
        daemon.signal(SIGKILL)
        daemon.process.waitUntilExit()
        try Self.publish(broker, Self.setWaypoints([("Sticky", "sticky-1", stop, 80)]), retain: true)
        daemon = try Daemon(arguments, in: dir)
        #expect(daemon.waitForLog("MQTT commands subscribed"), "\(daemon.stderr)")
        #expect(daemon.stderr.contains("fences pushed over MQTT") && daemon.stderr.contains("pushed=1"), "\(daemon.stderr)")
        #expect(daemon.waitForLog("pushed=2"), "\(daemon.stderr)")
        #expect(daemon.waitForLog("MQTT command ignored: a retained message"), "\(daemon.stderr)")
        try Self.publish(broker, "", retain: true)
        #expect(daemon.waitForLog("an empty message"))
        daemon.signal(SIGHUP)
        #expect(daemon.waitForLog("profile reloaded"))
        #expect(daemon.stderr.contains("fences=3"), "\(daemon.stderr)")
        let listed = try runGeomon(["fences", "--profile", profile, "--db", db])
        #expect(listed.exitCode == 0, "\(listed.stderr)")
        let rows = listed.stdout.split(separator: "\n")
        #expect(rows.contains { $0.hasPrefix("stop-1") && $0.contains("pushed ") && $0.contains("by command 3") }, "\(listed.stdout)")
        #expect(rows.contains { $0.hasPrefix("sticky-1") && $0.contains("by command 5") }, "\(listed.stdout)")

        // clearWaypoints: the pushed fences go, the profile's stays.
        try Self.publish(broker, #"{"_type":"cmd","action":"clearWaypoints"}"#)
        #expect(daemon.waitForLog("pushed=0"), "\(daemon.stderr)")
        let after = try runGeomon(["fences", "--profile", profile, "--db", db])
        #expect(!after.stdout.contains("stop-1") && !after.stdout.contains("sticky-1") && after.stdout.contains("depot"))
        #expect(daemon.stop() == 0, "\(daemon.stderr)")

        // Who changed what, when: every command received, refused ones too.
        let commands = try runGeomon(["events", "--db", db, "--commands", "--format", "json"])
        let actions = try commands.stdout.split(separator: "\n").map { line in
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return "\(o["action"] as? String ?? "?") \(o["accepted"] as? Bool == true ? "accepted" : "refused")"
        }
        #expect(actions == ["setConfiguration refused", "- refused", "setWaypoints accepted", "reportLocation accepted", "setWaypoints accepted",
                            "clearWaypoints accepted"], "\(commands.stdout)")
    }

    /// The anchor watch over MQTT: `placeFence` puts a circle where the device stands (the
    /// recorded car's first minute), monitored at once: it is left when the car drives off.
    /// `removeFence` takes it away; both are stored as commands.
    @Test func placeFenceOverMQTTWatchesWhereTheDeviceStands() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.vanProfile(dir, broker: broker)
        let gpsd = try GPSFakeHarness(log: RunCommandTests.shortSwiss, cycleSeconds: 0.1, lingerSeconds: 2)
        defer { gpsd.stop() }
        let db = dir.path("van.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(gpsd.port)", "--always-on", "--print-events", "--log-level", "info"], in: dir)
        #expect(daemon.waitForLog("MQTT commands subscribed"), "\(daemon.stderr)")
        #expect(waitUntil(within: .seconds(30)) { (try? runGeomon(["status", "--db", db, "--format", "json"]).stdout.contains("\"last_fix\":{")) == true })
        try Self.publish(broker, #"{"_type":"cmd","action":"placeFence","id":"anchor","radius":40,"name":"Anchor"}"#)
        #expect(daemon.waitForLog("pushed fences changed"), "\(daemon.stderr)")
        let listed = try runGeomon(["fences", "--profile", profile, "--db", db])
        #expect(listed.stdout.split(separator: "\n").contains { $0.hasPrefix("anchor") && $0.contains("by MQTT command 1") }, "\(listed.stdout)")
        #expect(waitUntil(within: .seconds(90)) { (try? RunCommandTests.events(daemon.stdout).contains { $0.type == "exit" && $0.fence == "anchor" }) == true },
                "\(daemon.stdout)\n\(daemon.stderr.suffix(2000))")
        try Self.publish(broker, #"{"_type":"cmd","action":"removeFence","id":"anchor"}"#)
        try Self.publish(broker, #"{"_type":"cmd","action":"removeFence","id":"anchor"}"#)
        #expect(daemon.waitForLog("no placed fence 'anchor'"), "\(daemon.stderr)")
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
        #expect(!(try runGeomon(["fences", "--profile", profile, "--db", db]).stdout.contains("anchor")))
        let commands = try runGeomon(["events", "--db", db, "--commands", "--format", "json"])
        let actions = try commands.stdout.split(separator: "\n").map { line in
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return "\(o["action"] as? String ?? "?") \(o["accepted"] as? Bool == true ? "accepted" : "refused")"
        }
        #expect(actions == ["placeFence accepted", "removeFence accepted", "removeFence refused"], "\(commands.stdout)")
    }

    /// A fence placed on the device outranks the server's: a waypoint with its id is left out
    /// (the anchor watch is never silently moved), and `placeFence` with a profile fence's id
    /// is refused. Waypoints apply in order: one set and removed in the same command leaves
    /// nothing.
    @Test func aPlacedFenceOutranksPushedOnesAndWaypointsApplyInOrder() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.vanProfile(dir, broker: broker)
        let gpsd = try GPSFakeHarness(log: RunCommandTests.shortSwiss, cycleSeconds: 0.1, lingerSeconds: 2)
        defer { gpsd.stop() }
        let db = dir.path("van.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(gpsd.port)", "--always-on", "--log-level", "info"], in: dir)
        #expect(daemon.waitForLog("MQTT commands subscribed"), "\(daemon.stderr)")
        #expect(waitUntil(within: .seconds(30)) { (try? runGeomon(["status", "--db", db, "--format", "json"]).stdout.contains("\"last_fix\":{")) == true })
        try Self.publish(broker, #"{"_type":"cmd","action":"placeFence","id":"anchor","radius":40}"#)
        #expect(daemon.waitForLog("pushed fences changed"), "\(daemon.stderr)")
        try Self.publish(broker, Self.setWaypoints([("Far away", "anchor", Coordinate(latitude: 47.5, longitude: 8.5), 5000)]))
        #expect(daemon.waitForLog("a fence placed on the device"), "\(daemon.stderr)")
        try Self.publish(broker, #"{"_type":"cmd","action":"placeFence","id":"depot","radius":40}"#)
        #expect(daemon.waitForLog("'depot' is a fence of the profile"), "\(daemon.stderr)")
        let ghost = Coordinate(latitude: 46.1, longitude: 7.1)
        try Self.publish(broker, Self.setWaypoints([("Ghost", "ghost", ghost, 100), ("Ghost", "ghost", ghost, 0)]))
        #expect(daemon.waitForLog("set 0 (), removed 0"), "\(daemon.stderr)")
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
        let listed = try runGeomon(["fences", "--profile", profile, "--db", db])
        let anchor = listed.stdout.split(separator: "\n").filter { $0.hasPrefix("anchor") }
        #expect(anchor.count == 1 && anchor.allSatisfy { $0.contains("by MQTT command 1") && !$0.contains("Far away") }, "\(listed.stdout)")
        #expect(!listed.stdout.contains("ghost") && listed.stdout.contains("depot"), "\(listed.stdout)")
    }

    /// A fence the device is in, renamed and then cleared by the server: Home Assistant gets a
    /// leave for the old name, an enter for the new, and a leave when it goes, on the event
    /// topic like any transition; none is left "inside".
    @Test func aRenamedOrClearedPushedFenceTheDeviceIsInIsLeft() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // The drive's first 80 s: the car stands in its depot, inside the yard from the first
        // fix (`initial: report`: consumers are told).
        let gpsd = try PacedGPSD(log: RunCommandTests.shortSwiss, seconds: 70)
        defer { gpsd.stop() }
        let served = dir.url.appendingPathComponent("served.nmea")
        try gpsd.writeServedLog(to: served)
        let standing = try #require(TrackReader.read(path: served.path).fixes.first).coordinate
        let profile = try Self.vanProfile(dir, broker: broker, initial: "report")
        let recorder = try broker.subscribe(Self.topic + "/#")
        defer { recorder.stop() }
        let arguments = ["--profile", profile, "--db", dir.path("van.db"), "--gpsd", "127.0.0.1:\(gpsd.port)", "--always-on", "--print-events", "--log-level", "info"]
        let daemon = try Daemon(arguments, in: dir)
        #expect(daemon.waitForLog("MQTT commands subscribed"), "\(daemon.stderr)")
        try Self.publish(broker, Self.setWaypoints([("Yard", "yard-1", standing, 150)]))
        #expect(daemon.waitForLog("pushed fences changed"), "\(daemon.stderr)")
        gpsd.start()
        func transitions(_ count: Int) -> [String] {
            recorder.wait(timeout: .seconds(20)) { $0.filter { $0.topic == Self.topic + "/event" }.count >= count }
                .filter { $0.topic == Self.topic + "/event" }.compactMap { message in
                guard let o = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any] else { return nil }
                return "\(o["event"] as? String ?? "?") \(o["desc"] as? String ?? "?")"
            }
        }
        #expect(transitions(1) == ["enter Yard"], "\(daemon.stderr.suffix(2000))")
        // The server's own identity comes back: the waypoint's `tst` in the retained waypoints
        // and as the transition's `wtst`.
        #expect(recorder.messages.first { $0.topic == Self.topic + "/event" }.map { $0.payload.contains(#""wtst":1710104383"#) } == true, "\(recorder.messages)")
        var waypoints = ""
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !waypoints.contains("yard-1") {
            waypoints = try broker.retained(Self.topic + "/waypoints") ?? ""
        }
        #expect(waypoints.contains(#""rid":"yard-1","tst":1710104383"#), "\(waypoints) \(recorder.messages.filter { $0.topic.hasSuffix("waypoints") })")
        // Renamed: same identity (rid), another name.
        try Self.publish(broker, Self.setWaypoints([("Lager", "yard-1", standing, 150)]))
        #expect(transitions(3) == ["enter Yard", "leave Yard", "enter Lager"], "\(daemon.stderr.suffix(2000))")
        try Self.publish(broker, #"{"_type":"cmd","action":"clearWaypoints"}"#)
        #expect(transitions(4) == ["enter Yard", "leave Yard", "enter Lager", "leave Lager"], "\(daemon.stderr.suffix(2000))")
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
        let events = try RunCommandTests.events(daemon.stdout)
        #expect(events.map { "\($0.type) \($0.fence)" } == ["enter yard-1", "exit yard-1", "enter yard-1", "exit yard-1"], "\(daemon.stdout)")
    }
}
