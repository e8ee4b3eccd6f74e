import Foundation
import GeomonCore
import GeomonTestSupport
import Testing

/// Modes end to end: a profile with `modes:`, `geomon replay --power-supply` with a recorded
/// supply, real hook processes, the report's time per mode and the database `geomon status`
/// reads.
struct ModeCommandTests {
    /// A drive east at 12 m/s, a fix every second for 1200 s (14.4 km), past seven 150 m
    /// circles 2 km apart (at 1, 3, …, 13 km). The van's modes: continuous on external power,
    /// regions on the battery, significant-change below 20 %.
    static func van(_ dir: TemporaryDirectory, hook: String) throws -> (profile: String, track: String) {
        var fences = ""
        for k in 0..<7 {
            let c = Geodesy.destination(from: MovementCommandTests.center, bearingDegrees: 90, distanceMeters: 1000 + 2000 * Double(k))
            fences += "  - {id: f\(k), circle: {lat: \(c.latitude), lon: \(c.longitude), radius: 150m}}\n"
        }
        let profile = try dir.write("van.yaml", """
            version: 1
            name: van
            mode: regions
            sources:
              gnss: {plugin: gpsd}
              coarse: {exec: [/bin/true], interval: 1m, accuracy: 500m}
            policy: {max_speed: 30m/s, min_sleep: 10s, max_sleep: 30m}
            modes:
              - name: driving
                when: {external_power: true}
                mode: continuous
              - name: low
                when: {battery_below: 20%}
                mode: significant-change
              - name: parked
                when: {external_power: false}
                mode: regions
            hooks:
              mode: [{exec: [\(hook)]}]
            fences:

            """ + fences)
        let drive = (0..<1200).map { k in (t: Double(k), x: 12 * Double(k), speed: 12.0) }
        return (profile, try dir.write("drive.jsonl", try MovementCommandTests.track("2026-12-07T07:00:00Z", drive)))
    }

    /// Plugged in at the start; unplugged inside f1 (at 250 s, x = 3000 m), plugged between
    /// fences (500 s), unplugged inside f4 (760 s, x = 9120 m), and at 15 % past the last fence
    /// (1150 s).
    static let supply = """
        {"time":"2026-12-07T07:00:00Z","capacity":90,"online":true}
        {"time":"2026-12-07T07:04:10Z","capacity":89,"online":false}
        {"time":"2026-12-07T07:08:20Z","capacity":88,"online":true}
        {"time":"2026-12-07T07:12:40Z","capacity":87,"online":false}
        {"time":"2026-12-07T07:15:00Z","capacity":87,"online":false}
        {"time":"2026-12-07T07:19:10Z","capacity":15,"online":false}

        """

    @Test func everySwitchComesAtItsReadingAndNoFenceEventIsLostOrInventedAcrossThem() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (hook, hookLog) = try dir.recordingHook("mode", ["GEOMON_EVENT", "GEOMON_MODE", "GEOMON_FROM", "GEOMON_CAUSE", "GEOMON_BATTERY_PCT"])
        let (profile, track) = try Self.van(dir, hook: hook)
        let supply = try dir.write("supply.jsonl", Self.supply)
        let db = dir.path("van.db")
        let run = try runGeomon(["replay", "--profile", profile, track, "--power-supply", supply, "--format", "json", "--db", db,
                                 "--report", dir.path("report.json")])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let events = try MovementCommandTests.objects(run.stdout)
        let modes = events.filter { $0["type"] as? String == "mode" }
        // Each switch at its reading's instant (the unchanged reading at 07:15 switches nothing).
        #expect(modes.map { "\($0["time"]!) \($0["from"]!)->\($0["mode"]!) \($0["cause"]!)" } == [
            "2026-12-07T07:00:00Z default->driving external_power",
            "2026-12-07T07:04:10Z driving->parked external_power",
            "2026-12-07T07:08:20Z parked->driving external_power",
            "2026-12-07T07:12:40Z driving->parked external_power",
            "2026-12-07T07:19:10Z parked->low battery",
        ])
        // Every fence entered and left once, in order: the switches inside f1 and f4 neither
        // close nor reopen a stay.
        let fenceEvents = events.filter { ["enter", "exit"].contains($0["type"] as? String) }
        let expected = (0..<7).flatMap { ["enter f\($0)", "exit f\($0)"] }
        #expect(fenceEvents.map { "\($0["type"]!) \($0["fence"]!)" } == expected)
        // At the fix taken at the same instant or before (the recording's first fix goes first).
        #expect(modes.allSatisfy { $0["lat"] is Double })

        // The hook ran once per switch with the figures.
        let lines = try String(contentsOfFile: hookLog, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines == ["mode driving default external_power 90", "mode parked driving external_power 89", "mode driving parked external_power 88",
                          "mode parked driving external_power 87", "mode low parked battery 15"])

        // The report's time per mode covers the track; continuous kept the receiver on while
        // driving, regions slept between the fences (2 km at 12 m/s is 167 s away).
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.url.appendingPathComponent("report.json"))) as? [String: Any])
        let perMode = try #require(report["modes"] as? [String: [String: Double]])
        #expect(report["mode_switches"] as? Int == 5)
        let total = perMode.values.reduce(0) { $0 + ($1["s"] ?? 0) }
        #expect(abs(total - (report["track_s"] as? Double ?? 0)) < 0.01)
        let driving = try #require(perMode["driving"]), parked = try #require(perMode["parked"])
        #expect(abs((driving["s"] ?? 0) - (250 + 260)) < 0.01)
        #expect((driving["gnss_on_s"] ?? 0) >= (driving["s"] ?? 0) - 1)
        #expect((parked["gnss_on_s"] ?? 0) < (parked["s"] ?? 0) * 0.5)
        #expect((perMode["low"]?["gnss_on_s"] ?? 1) == 0)

        // `geomon status` shows the mode the run ended in, with the supply it was chosen on.
        let status = try runGeomon(["status", "--db", db])
        #expect(status.stdout.contains("mode:               low since 2026-12-07T07:19:10Z (external power offline, battery 15 %)"), "\(status.stdout)")
        let listed = try runGeomon(["events", "--db", db])
        #expect(listed.stdout.contains("mode: parked -> low, battery 15 % (external power offline)"), "\(listed.stdout)")
    }

    @Test func validateSaysHowItUnderstoodTheModes() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (hook, _) = try dir.recordingHook("mode", ["GEOMON_MODE"])
        let (profile, _) = try Self.van(dir, hook: hook)
        let result = try runGeomon(["validate", profile])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.contains("van.yaml: mode driving: continuous when external power online\n"), "\(result.stdout)")
        #expect(result.stdout.contains("van.yaml: mode low: significant-change when battery below 20 %\n"))
        #expect(result.stdout.contains("van.yaml: mode parked: regions when external power offline\n"))
        #expect(result.stdout.contains("van.yaml: mode default: the profile's own settings when no mode holds\n"))
        // A mode whose policy plans with other bounds says so.
        let walking = try dir.write("walker.yaml", String(contentsOfFile: profile, encoding: .utf8).replacingOccurrences(
            of: "mode: regions\nhooks:", with: "mode: regions\n    policy: {max_speed: 4m/s}\nhooks:"))
        let walker = try runGeomon(["validate", walking])
        #expect(walker.stdout.contains("walker.yaml: mode parked: regions, its policy when external power offline\n"), "\(walker.stdout)\(walker.stderr)")
        #expect(walker.stdout.contains("walker.yaml: mode parked: planned for any (policy.max_speed and max_acceleration): max_speed 4 m/s"), "\(walker.stdout)")
    }

    /// A reading before the recording's first fix switches the mode before any position is
    /// known: the event has none, and `export` writes it without one.
    @Test func aSwitchBeforeTheFirstFixHasNoPositionAndIsExportedWithoutOne() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (hook, hookLog) = try dir.recordingHook("mode", ["GEOMON_MODE", "GEOMON_LAT"])
        let (profile, _) = try Self.van(dir, hook: hook)
        let drive = (0..<60).map { k in (t: Double(k), x: 12 * Double(k), speed: 12.0) }
        let track = try dir.write("late.jsonl", try MovementCommandTests.track("2026-12-07T07:00:10Z", drive))
        let supply = try dir.write("supply.jsonl", #"{"time":"2026-12-07T07:00:00Z","capacity":90,"online":true}"# + "\n")
        let db = dir.path("van.db")
        let run = try runGeomon(["replay", "--profile", profile, track, "--power-supply", supply, "--format", "json", "--db", db])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let first = try #require(try MovementCommandTests.objects(run.stdout).first)
        #expect(first["type"] as? String == "mode" && first["lat"] is NSNull && first["accuracy_m"] is NSNull, "\(run.stdout)")
        #expect(try String(contentsOfFile: hookLog, encoding: .utf8) == "driving \n")
        let geojson = try runGeomon(["export", "--db", db, "--format", "geojson"])
        #expect(geojson.stdout.contains(#""type":"mode""#) && geojson.stdout.contains(#""geometry":null"#), "\(geojson.stdout)")
        let gpx = try runGeomon(["export", "--db", db, "--format", "gpx"])
        #expect(gpx.exitCode == 0 && !gpx.stdout.contains("<type>mode</type>"))
        let text = try runGeomon(["events", "--db", db])
        #expect(text.stdout.contains("no position yet"), "\(text.stdout)")
    }

    @Test func aSupplyRecordingGeomonCannotReadIsAnErrorNamingTheLine() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (hook, _) = try dir.recordingHook("mode", ["GEOMON_EVENT"])
        let (profile, track) = try Self.van(dir, hook: hook)
        let bad = try dir.write("bad.jsonl", """
            {"time":"2026-12-07T07:00:00Z","capacity":90,"online":true}
            {"time":"2026-12-07T07:01:00Z","capacity":190}

            """)
        let result = try runGeomon(["replay", "--profile", profile, track, "--power-supply", bad])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("line 2: bad \"capacity\" (a whole percentage, 0 to 100)"), "\(result.stderr)")
        let missing = try runGeomon(["replay", "--profile", profile, track, "--power-supply", dir.path("none.jsonl")])
        #expect(missing.exitCode == 66 && missing.stderr.contains("cannot read"))
    }
}
