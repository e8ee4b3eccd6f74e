import Foundation
import GeomonCore
import GeomonTestSupport
import Testing

/// Speed in a zone, the cooldown and time inside, end to end: a profile file, `geomon replay`
/// on a recorded-style track, real hook processes and the database `geomon events` reads.
struct MovementCommandTests {
    static let center = Coordinate(latitude: 47.0, longitude: 8.0)

    /// JSON lines of fixes `x` metres east of the centre at `t` seconds after `start`.
    static func track(_ start: String, _ points: [(t: Double, x: Double, speed: Double)]) throws -> String {
        let t0 = try #require(UTCTime(rfc3339: start))
        return points.map { p in
            let c = Geodesy.destination(from: center, bearingDegrees: p.x < 0 ? 270 : 90, distanceMeters: abs(p.x))
            return #"{"time":"\#((t0 + .milliseconds(Int64(p.t * 1000))).rfc3339)","lat":\#(c.latitude),"lon":\#(c.longitude),"accuracy_m":5,"speed_mps":\#(p.speed),"course_deg":90}"#
        }.joined(separator: "\n") + "\n"
    }

    static func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    /// A drive east at 12 m/s, a fix every 2 s, from 1000 m west of a school zone (a 300 m
    /// circle, 30 km/h on weekday mornings) to 1000 m east of it: at 07:30 on a Monday, then
    /// at 10:00.
    static func schoolDrive(_ dir: TemporaryDirectory, mode: String) throws -> (profile: String, track: String) {
        let profile = try dir.write("school.yaml", """
            version: 1
            name: school
            mode: \(mode)
            timezone: UTC
            sources:
              gnss: {plugin: gpsd}
            fences:
              - id: school
                circle: {lat: \(center.latitude), lon: \(center.longitude), radius: 300m}
                speed_limit: {limit: 30km/h, for: 10s}
                active: [{days: mon-fri, from: "07:00", to: "09:00"}]
            """)
        let drive = (0...83).map { k in (t: Double(2 * k), x: -1000 + 24 * Double(k), speed: 12.0) }
        let text = try track("2026-12-07T07:30:00Z", drive) + track("2026-12-07T10:00:00Z", drive)
        return (profile, try dir.write("drive.jsonl", text))
    }

    @Test func speedingInAZoneDuringItsWindowIsReportedWithItsFiguresAndNotOutsideIt() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (profile, track) = try Self.schoolDrive(dir, mode: "regions")
        let result = try runGeomon(["replay", "--profile", profile, track, "--always-on", "--tracking-interval", "0", "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let events = try Self.objects(result.stdout)
        // Every recorded fix and only those (no interpolation). Inside certain from the fix at x = −280 m (fix 30, 07:31:00; 300 − (5 + 10) m), the
        // enter confirmed by the next (fix 31, 07:31:02), from which the rule watches the speed:
        // above the limit for 10 s at fix 36, `overspeed` dated 07:31:02. The exit is certain at
        // x = 320 m (fix 55) and confirmed at fix 56 (07:31:52): the end, 50 s and 25 × 24 m
        // later. At 10:00 the zone is not active: nothing.
        #expect(events.map { "\($0["type"]!) \($0["time"]!)" } == [
            "enter 2026-12-07T07:31:00Z", "overspeed 2026-12-07T07:31:02Z", "exit 2026-12-07T07:31:50Z", "overspeed_end 2026-12-07T07:31:52Z",
        ])
        let end = try #require(events.last)
        #expect(end["duration_s"] as? Double == 50)
        #expect(abs((end["distance_m"] as? Double ?? 0) - 600) < 0.5)
        #expect(end["max_speed_mps"] as? Double == 12)
        #expect(abs((end["limit_mps"] as? Double ?? 0) - 30 / 3.6) < 0.01)
        #expect(events[2]["inside_s"] as? Double == 50)
    }

    @Test func thePolicyKeepsTheReceiverOnInsideALimitedZoneWhileTheDeviceIsFast() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (profile, track) = try Self.schoolDrive(dir, mode: "regions")
        let log = dir.path("policy.log")
        let result = try runGeomon(["replay", "--profile", profile, track, "--format", "json", "--policy-log", log])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let types = try Self.objects(result.stdout).map { $0["type"] as? String ?? "?" }
        #expect(types.contains("overspeed") && types.contains("overspeed_end"), "\(types)")
        // From the enter's confirmation to the exit's, the receiver stays on: no switch-off.
        // Without the limit the same drive sleeps in between (what the rule costs).
        func offs(_ log: String, from: String, to: String) throws -> Int {
            try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { line in
                let time = String(line.prefix { $0 != " " })
                return time >= from && time <= to && line.contains(" gnss-off ")
            }.count
        }
        #expect(try offs(log, from: "2026-12-07T07:31:02", to: "2026-12-07T07:31:50") == 0)
        let unlimited = try dir.write("unlimited.yaml", try String(contentsOfFile: profile, encoding: .utf8)
            .replacingOccurrences(of: "    speed_limit: {limit: 30km/h, for: 10s}\n", with: ""))
        let plain = dir.path("plain.log")
        #expect(try runGeomon(["replay", "--profile", unlimited, track, "--policy-log", plain]).exitCode == 0)
        #expect(try offs(plain, from: "2026-12-07T07:31:02", to: "2026-12-07T07:31:50") > 0)
    }

    @Test func aCooldownGivesTheConsumerPairsOrNothingAndEventsListsWhatItHeldBack() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (hook, seen) = try dir.recordingHook("seen", ["GEOMON_EVENT", "GEOMON_INSIDE_S"])
        let profile = try dir.write("edge.yaml", """
            version: 1
            name: edge
            mode: continuous
            sources:
              gnss: {plugin: gpsd}
            defaults: {cooldown: 10m}
            fences:
              - id: lot
                circle: {lat: \(Self.center.latitude), lon: \(Self.center.longitude), radius: 100m}
            hooks:
              enter: [{exec: [\(hook)]}]
              exit: [{exec: [\(hook)]}]
            """)
        // Parked on the edge, a fix every 10 s: 20 s at 70 m, 20 s at 130 m, for 20 min (an
        // enter and an exit every 40 s), then 15 min at 70 m, then at 130 m.
        var points: [(t: Double, x: Double, speed: Double)] = []
        for k in 0..<(50 * 60 / 10) {
            let t = Double(10 * k)
            let x: Double = t < 1200 ? ((k / 2) % 2 == 0 ? 130 : 70) : t < 2100 ? 70 : 130
            points.append((t, x, 0))
        }
        let track = try dir.write("edge.jsonl", try Self.track("2026-12-07T12:00:00Z", points))
        let db = dir.path("edge.db")
        let result = try runGeomon(["replay", "--profile", profile, track, "--always-on", "--format", "json", "--db", db])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let all = try Self.objects(result.stdout)
        let held = all.filter { $0["suppressed"] as? Bool == true }
        #expect(held.count > 20)
        // What the consumer saw: enter, exit, enter, exit, … never two enters in a row, ending
        // outside; at most one pair per 10 min of flapping, then the long stay.
        let lines = try String(contentsOfFile: seen, encoding: .utf8).split(separator: "\n").map { String($0.split(separator: " ")[0]) }
        #expect(lines.count >= 4 && lines.count % 2 == 0, "\(lines)")
        #expect(lines.enumerated().allSatisfy { i, kind in kind == (i % 2 == 0 ? "enter" : "exit") }, "\(lines)")
        #expect(lines.count <= 2 * (1 + 1200 / 600) + 2, "\(lines)")
        // `geomon events` lists every one, the held-back ones marked.
        let stored = try runGeomon(["events", "--db", db, "--format", "json"])
        #expect(try Self.objects(stored.stdout).filter { $0["suppressed"] as? Bool == true }.count == held.count)
        let text = try runGeomon(["events", "--db", db])
        #expect(text.stdout.contains("(suppressed: cooldown)"))
        // Every exit a consumer got says how long the stay lasted.
        let exits = try String(contentsOfFile: seen, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("exit ") }
        #expect(exits.allSatisfy { Double($0.split(separator: " ").last ?? "") ?? 0 > 0 }, "\(exits)")
    }

    @Test func fencesInsideListsTheOccupiedFencesWithSinceWhen() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try dir.write("home.yaml", """
            version: 1
            name: home
            mode: continuous
            sources:
              gnss: {plugin: gpsd}
            fences:
              - {id: home, name: Home, circle: {lat: \(Self.center.latitude), lon: \(Self.center.longitude), radius: 100m}}
              - {id: far, circle: {lat: 48, lon: 9, radius: 100m}}
            """)
        let track = try dir.write("home.jsonl", try Self.track("2026-12-07T12:00:00Z", (0..<10).map { (Double(10 * $0), $0 < 2 ? 500 : 0, 0) }))
        let db = dir.path("home.db")
        #expect(try runGeomon(["replay", "--profile", profile, track, "--always-on", "--db", db]).exitCode == 0)
        let text = try runGeomon(["fences", "--profile", profile, "--db", db, "--inside", "--at", "2026-12-07T13:00:20Z"])
        // The replay's receiver gives a fix a second between the recorded ones: in the circle
        // from 19 s (50 m from its centre), confirmed at 20 s.
        #expect(text.stdout == "home\tHome\tsince 2026-12-07T12:00:19Z\tinside for 1 h 00 min\n", "\(text.stdout)\(text.stderr)")
        let json = try Self.objects(try runGeomon(["fences", "--profile", profile, "--db", db, "--inside", "--format", "json", "--at", "2026-12-07T12:01:19Z"]).stdout)
        #expect(json.count == 1 && json[0]["id"] as? String == "home" && json[0]["inside_s"] as? Double == 60)
        let usage = try runGeomon(["fences", "--profile", profile, "--inside"])
        #expect(usage.exitCode == 64 && usage.stderr.contains("'--inside' needs '--db PATH'"))
    }
}
