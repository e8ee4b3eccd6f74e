import Foundation
import GeomonCore
import GeomonTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `geomon replay`, `events`, `status`, `export` through the built binary, on real tracks.
///
/// Fixtures (Tests/Fixtures/replay, see SOURCE.md): real receiver logs converted to JSON lines,
/// profiles with fences placed across them, and the expected events computed independently by
/// scripts/replay_expected.py.
@Suite(.serialized)
struct ReplayCommandTests {
    static let keys = ["id", "type", "fence", "time", "lat", "lon", "accuracy_m"]

    static func fixture(_ name: String) -> String { TestSupport.fixture("replay/\(name)").path }

    /// The shipped fitness profile decides the hike it was written for (its GPX records no
    /// accuracy: read at 30 m, within the profile's `min_accuracy`); a `min_accuracy` tighter
    /// than every recorded fix decides nothing, and the replay says why.
    @Test func theFitnessProfileDecidesItsHikeAndAnUnusableRecordingIsSaid() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let hike = TestSupport.fixture("tracks/georust_garmin_with_extensions.gpx").path
        let shipped = TestSupport.packageRoot.appendingPathComponent("profiles/fitness.yaml").path
        let run = try runGeomon(["replay", "--profile", shipped, "--no-hooks", "--format", "json", hike])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let kinds = try Self.objects(run.stdout).map { "\($0["type"] ?? "") \($0["fence"] ?? "")" }
        #expect(kinds.contains("exit trailhead") && kinds.contains("enter summit"), "\(kinds)")
        #expect(!run.stderr.contains("min_accuracy"), "\(run.stderr)")
        // Without its hooks (their programs are beside the shipped profile, not here).
        var tight = try String(contentsOfFile: shipped, encoding: .utf8).replacingOccurrences(of: "min_accuracy: 30m", with: "min_accuracy: 25m")
        let hooks = try #require(tight.range(of: "\nhooks:")), storage = try #require(tight.range(of: "\nstorage:"))
        tight.removeSubrange(hooks.lowerBound..<storage.lowerBound)
        let profile = try dir.write("fitness.yaml", tight)
        let none = try runGeomon(["replay", "--profile", profile, "--no-hooks", hike])
        #expect(none.exitCode == 0 && none.stdout.isEmpty, "\(none.stdout)")
        #expect(none.stderr.contains("replay: note: none of the 3540 recorded fixes is within sources.gnss.min_accuracy (25 m; the best is 30 m)"), "\(none.stderr)")
    }

    /// The lines of the recorded Swiss drive (JSON lines).
    static func driveLines() throws -> [Substring] {
        try String(contentsOfFile: fixture("swiss-drive.jsonl"), encoding: .utf8).split(separator: "\n")
    }

    static func objects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The compared part of each event, as canonical strings.
    static func canonical(_ objects: [[String: Any]]) -> [String] {
        objects.map { o in
            keys.map { key -> String in
                // Output rounds coordinates to 7 decimals (1 cm) and accuracy to 0.1 m.
                if let number = o[key] as? NSNumber, !(o[key] is String) {
                    let places = key == "accuracy_m" ? 1.0 : 7.0
                    let scale = Foundation.pow(10.0, places)
                    return "\(key)=\((number.doubleValue * scale).rounded() / scale)"
                }
                return "\(key)=\(o[key].map { "\($0)" } ?? "nil")"
            }.joined(separator: " ")
        }
    }

    @Test(arguments: [("swiss-drive", "swiss-drive"), ("telit-parked", "telit-static"), ("swiss-location", "swiss-drive")])
    func replayOfARealTrackGivesExactlyTheExpectedEventsEveryTime(profile: String, track: String) throws {
        let args = ["replay", "--profile", Self.fixture("\(profile).profile.yaml"), Self.fixture("\(track).jsonl"), "--format", "json", "--no-hooks", "--always-on"]
        let first = try runGeomon(args)
        #expect(first.exitCode == 0, "\(first.stderr)")
        let expected = try String(contentsOfFile: Self.fixture("\(profile).expected.jsonl"), encoding: .utf8)
        #expect(Self.canonical(try Self.objects(first.stdout)) == Self.canonical(try Self.objects(expected)))
        #expect(try Self.objects(first.stdout).allSatisfy { ($0["rule"] as? String)?.isEmpty == false })
        let second = try runGeomon(args)
        #expect(second.stdout == first.stdout)
        let text1 = try runGeomon(args.filter { $0 != "json" && $0 != "--format" })
        let text2 = try runGeomon(args.filter { $0 != "json" && $0 != "--format" })
        #expect(text1.exitCode == 0 && text1.stdout == text2.stdout)
        #expect(text1.stdout.split(separator: "\n").count == first.stdout.split(separator: "\n").count)
    }

    /// The real drive is inside f04 from 11:36:43 to 11:37:01 (UTC, a Saturday); a window that
    /// closes at 11:37 closes the stay for consumers then, with the rule that says why, and the
    /// physical exit after it reports nothing more. On a database, a replay that resumes after
    /// the closing adds nothing.
    @Test func aWindowClosingWhileInsideIsAnExitAtTheClosing() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try dir.write("p.yaml", """
            version: 1
            name: window
            mode: regions
            timezone: UTC
            sources: {gnss: {plugin: gpsd, min_accuracy: 50m}}
            transitions: {hysteresis: 10m, confirm: 2}
            fences:
              - {id: f04, name: School, circle: {lat: 47.231039, lon: 7.624777, radius: 250m}, active: [{days: sat, from: "11:00", to: "11:37"}]}
            """)
        let args = ["replay", "--profile", profile, Self.fixture("swiss-drive.jsonl"), "--format", "json", "--no-hooks", "--always-on"]
        let result = try runGeomon(args)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let events = try Self.objects(result.stdout)
        #expect(events.map { "\($0["type"] ?? "") \($0["time"] ?? "")" } == ["enter 2010-04-03T11:36:43Z", "exit 2010-04-03T11:37:00Z"])
        #expect(events.last?["rule"] as? String == "exit: the fence's active window closed while inside; inside since 2010-04-03T11:36:43Z")
        #expect(events.last?["fence_name"] as? String == "School")
        // Stored, then replayed again on the same database: the same two, not one more.
        let db = dir.path("w.db")
        #expect(try runGeomon(args + ["--db", db]).exitCode == 0)
        let again = try runGeomon(args + ["--db", db])
        #expect(again.exitCode == 0, "\(again.stderr)")
        let stored = try runGeomon(["events", "--db", db, "--format", "json"])
        #expect(try Self.objects(stored.stdout).map { $0["id"] as? String ?? "" } == events.map { $0["id"] as? String ?? "" })
    }

    /// `status --profile P` reads the database `run --profile P` writes: the profile's
    /// `storage.path` (relative to the profile), else /var/lib/geomon/NAME.db.
    @Test func statusFindsTheDatabaseOfAProfile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var yaml = try String(contentsOfFile: Self.fixture("swiss-drive.profile.yaml"), encoding: .utf8)
        yaml = String(yaml[yaml.firstIndex(of: "{")!...])
        yaml.insert(contentsOf: #" "storage": {"path": "state/s.db"},"#, at: yaml.index(after: yaml.startIndex))
        let profile = try dir.write("p.yaml", yaml)
        try FileManager.default.createDirectory(atPath: dir.path("state"), withIntermediateDirectories: true)
        #expect(try runGeomon(["replay", "--profile", profile, "--db", dir.path("state/s.db"), Self.fixture("swiss-drive.jsonl")]).exitCode == 0)
        let status = try runGeomon(["status", "--profile", profile, "--format", "json"])
        #expect(status.exitCode == 0, "\(status.stderr)")
        #expect(status.stdout.contains(#""profile":"swiss-drive""#), "\(status.stdout)")
        // Without storage.path: the service's default, named when it is missing.
        let bare = try dir.write("bare.yaml", "version: 1\nname: nowhere-\(getpid())\nmode: regions\nsources: {gnss: {plugin: gpsd}}\nfences: [{id: a, circle: {lat: 1, lon: 1, radius: 100m}}]\n")
        let missing = try runGeomon(["status", "--profile", bare])
        #expect(missing.exitCode == 66 && missing.stderr.contains("/var/lib/geomon/nowhere-\(getpid()).db"), "\(missing.stderr)")
        #expect(try runGeomon(["status"]).exitCode == 64)
    }

    @Test func theTemporaryDatabaseIsRemoved() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = try runProcess(TestSupport.geomonBinary,
                                    ["replay", "--profile", Self.fixture("telit-parked.profile.yaml"), Self.fixture("telit-static.jsonl")],
                                    environment: ["TMPDIR": dir.url.path + "/"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
    }

    @Test func missingAndInvalidInputsGiveTheirExitCodes() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = Self.fixture("swiss-drive.profile.yaml")
        let missingTrack = try runGeomon(["replay", "--profile", profile, dir.path("nope.jsonl")])
        #expect(missingTrack.exitCode == 66)
        #expect(missingTrack.stderr.hasPrefix("geomon: error: "))
        let bad = try dir.write("bad.yaml", "{\"version\": 1, \"name\": \"x\", \"mode\": \"regions\", \"fences\": [{\"id\": \"a\", \"circle\": {\"lat\": 1, \"lon\": 2, \"radius\": -3}}]}")
        let invalid = try runGeomon(["replay", "--profile", bad, Self.fixture("telit-static.jsonl")])
        #expect(invalid.exitCode == 65)
        #expect(invalid.stderr.contains("radius"))
        #expect(try runGeomon(["replay", "--profile", dir.path("none.yaml"), Self.fixture("telit-static.jsonl")]).exitCode == 66)
        #expect(try runGeomon(["replay", Self.fixture("telit-static.jsonl")]).exitCode == 64)
        #expect(try runGeomon(["replay", "--profile", profile]).exitCode == 64)
        #expect(try runGeomon(["replay", "--profile", profile, "--speed", "0", Self.fixture("telit-static.jsonl")]).exitCode == 64)
    }

    @Test func aTrackWithoutAUsableFixExits65NamingTheFileAndWhy() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = Self.fixture("swiss-drive.profile.yaml")
        // 1 MiB of seeded noise (not a track a person wrote), the README, a GPX without times,
        // a GPX whose receiver reported no fix.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let noise = (0..<(1 << 20)).map { _ -> UInt8 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        let random = dir.path("random.bin")
        #expect(FileManager.default.createFile(atPath: random, contents: Data(noise)))
        let readme = TestSupport.packageRoot.appendingPathComponent("README.md").path
        func gpx(_ point: String) throws -> String {
            try dir.write("\(UUID().uuidString).gpx", """
                <?xml version="1.0"?>
                <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
                \(point)
                \(point)
                </trkseg></trk></gpx>
                """)
        }
        let timeless = try gpx(#"<trkpt lat="46.3" lon="6.9"><ele>400</ele></trkpt>"#)
        let noFix = try gpx(#"<trkpt lat="46.3" lon="6.9"><time>2020-05-01T12:00:00Z</time><fix>none</fix></trkpt>"#)
        for (path, reason) in [(random, "garbage"), (readme, "garbage"), (timeless, "2 no time"), (noFix, "2 no fix")] {
            let result = try runGeomon(["replay", "--profile", profile, path, "--no-hooks"])
            #expect(result.exitCode == 65, "\(path): \(result.stderr)")
            #expect(result.stderr.hasPrefix("geomon: error: \(path): no usable fix in this "), "\(result.stderr)")
            #expect(result.stderr.contains(reason), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // Beside a good track, an empty one is still an error: nothing is replayed.
        let mixed = try runGeomon(["replay", "--profile", profile, Self.fixture("swiss-drive.jsonl"), timeless])
        #expect(mixed.exitCode == 65 && mixed.stdout.isEmpty)

        // --stats counts what each track skipped, by reason.
        let stats = try runGeomon(["replay", "--profile", profile, Self.fixture("swiss-drive.jsonl"), "--no-hooks", "--stats"])
        #expect(stats.exitCode == 0)
        #expect(stats.stderr.contains("swiss-drive.jsonl (jsonl): "), "\(stats.stderr)")
        #expect(stats.stderr.contains(" fixes read, "))
    }

    /// The recording streams when its files are in time order and is held in memory when they
    /// are not (or come through a pipe): one file, the same split in two, the two given in the
    /// wrong order, its lines shuffled, and the file through a pipe all replay to the same
    /// events, report and policy log.
    @Test func streamedAndSortedRecordingsReplayAlike() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = Self.fixture("swiss-drive.profile.yaml")
        let lines = try Self.driveLines()
        let first = try dir.write("first.jsonl", lines.prefix(4000).joined(separator: "\n") + "\n")
        let second = try dir.write("second.jsonl", lines.dropFirst(4000).joined(separator: "\n") + "\n")
        var generator = SystemRandomNumberGenerator()
        let shuffled = try dir.write("shuffled.jsonl", lines.shuffled(using: &generator).joined(separator: "\n") + "\n")
        func replay(_ tracks: [String], stdin: String? = nil) throws -> [String] {
            let log = dir.url.appendingPathComponent("policy-\(tracks.count)-\(tracks[0].hashValue).log").path
            let result = try runGeomon(["replay", "--profile", profile] + tracks
                + ["--no-hooks", "--format", "json", "--compare-always-on", "--report", "-", "--policy-log", log], stdin: stdin)
            #expect(result.exitCode == 0, "\(result.stderr)")
            return [result.stdout, try String(contentsOfFile: log, encoding: .utf8)]
        }
        let whole = try replay([Self.fixture("swiss-drive.jsonl")])
        #expect(whole[0].contains("\"type\":\"enter\""))
        #expect(try replay([first, second]) == whole)
        #expect(try replay([second, first]) == whole)
        #expect(try replay([shuffled]) == whole)
        // A pipe can be read only once: its fixes are held from the first reading.
        #expect(try replay(["/dev/stdin"], stdin: lines.joined(separator: "\n") + "\n") == whole)
    }

    @Test func aShortTrackSaysWhatTheReceiverModelWithheld() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = Self.fixture("swiss-drive.profile.yaml")
        let all = try Self.driveLines()
        let short = try dir.write("short.jsonl", all.prefix(25).joined(separator: "\n") + "\n")
        let modelled = try runGeomon(["replay", "--profile", profile, short, "--no-hooks"])
        #expect(modelled.exitCode == 0, "\(modelled.stderr)")
        // Far from every fence the policy sleeps the receiver after a few fixes.
        // Each wake's first fix lies between recorded ones: it is interpolated, not used.
        #expect(modelled.stderr.contains("2 of 25 fixes used (and 4 interpolated)"), "\(modelled.stderr)")
        #expect(modelled.stderr.contains("replay: note: the receiver model withheld 23 of 25 recorded fixes"), "\(modelled.stderr)")
        let alwaysOn = try runGeomon(["replay", "--profile", profile, short, "--no-hooks", "--always-on"])
        #expect(alwaysOn.stderr.contains("25 of 25 fixes used") && !alwaysOn.stderr.contains("withheld"), "\(alwaysOn.stderr)")
    }

    /// The drive's profile with the time rules on every fence (approach bands, and a dwell
    /// after 20 s repeated every minute where the fence reports dwell), the movement rules
    /// (motion, trips, visits) and modes on the power supply (`supply`).
    static func timeRulesProfile(in dir: TemporaryDirectory) throws -> String {
        // The fixture is JSON after its comment line.
        let text = try String(contentsOfFile: fixture("swiss-drive.profile.yaml"), encoding: .utf8)
        let data = Data(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n").utf8)
        var root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let fences = try #require(root["fences"] as? [[String: Any]])
        root["fences"] = fences.map { fence -> [String: Any] in
            var fence = fence
            fence["approach"] = ["bands": ["2km", "500m", "100m"]]
            if (fence["events"] as? [String])?.contains("dwell") == true { fence["dwell"] = ["after": "20s", "every": "60s"] }
            return fence
        }
        root["movement"] = ["motion": true, "confirm": "10s", "trips": ["stop_after": "2m"], "visits": ["radius": "100m", "min_duration": "2m"]]
        root["modes"] = [["name": "driving", "when": ["external_power": true], "mode": "continuous"],
                         ["name": "parked", "when": ["external_power": false], "mode": "regions", "policy": ["max_sleep": "5m"]]]
        return try dir.write("time-rules.profile.yaml", String(decoding: try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys]), as: UTF8.self))
    }

    @Test(arguments: [false, true])
    func killMinus9DuringReplayThenResumingEqualsOneUninterruptedRun(_ timeRules: Bool) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = timeRules ? try Self.timeRulesProfile(in: dir) : Self.fixture("swiss-drive.profile.yaml")
        var args = ["replay", "--profile", profile, Self.fixture("swiss-drive.jsonl"), "--format", "json", "--always-on"]
        if timeRules {
            // Plugged in and out every 13 minutes over the 3 h drive, the battery falling.
            let start = try #require(UTCTime(rfc3339: "2010-04-03T11:22:25Z"))
            let supply = (0..<14).map { k in
                #"{"time":"\#((start + .seconds(Int64(780 * k))).rfc3339)","capacity":\#(90 - 3 * k),"online":\#(k % 2 == 0)}"#
            }.joined(separator: "\n") + "\n"
            args += ["--power-supply", try dir.write("supply.jsonl", supply)]
        }
        let reference = try runGeomon(args + ["--db", dir.path("ref.db")])
        #expect(reference.exitCode == 0)
        let referenceEvents = try runGeomon(["events", "--db", dir.path("ref.db"), "--format", "json"])
        #expect(referenceEvents.stdout == reference.stdout)
        if timeRules {
            // Approaches and repeated dwells are among what is killed and resumed.
            #expect(reference.stdout.components(separatedBy: #""type":"approach""#).count > 20)
            #expect(reference.stdout.components(separatedBy: "(dwell 2, every 60.0 s)").count > 2, "\(reference.stdout)")
            // So are trips, visits and motion changes, and the odometer.
            for kind in ["trip_start", "trip_end", "arrival", "departure", "moving", "still"] {
                #expect(reference.stdout.contains(#""type":"\#(kind)""#), "no \(kind)")
            }
            // And the 14 switches of mode.
            #expect(reference.stdout.components(separatedBy: #""type":"mode""#).count == 15, "\(reference.stdout)")
        }

        let db = dir.path("killed.db")
        var printed = ""
        // The 3 h track at 4000× real time: kill -9 right after the k-th event line appeared
        // (plus a few ms, so some kills land mid-batch), then start again on the same db.
        for (k, extraMilliseconds) in [(2, 0), (9, 7), (30, 3), (31, 0), (60, 11), (88, 5)] {
            let process = Process()
            process.executableURL = TestSupport.geomonBinary
            process.arguments = args + ["--db", db, "--speed", "4000"]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            var data = Data()
            let alreadyStored = printed.split(separator: "\n").count
            while data.filter({ $0 == 10 }).count + alreadyStored < k {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                data += chunk
            }
            // The kill lands a chosen time after the k-th event: the instant is the test.
            Thread.sleep(forTimeInterval: Double(extraMilliseconds) / 1000)
            kill(process.processIdentifier, SIGKILL)
            data += out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal, "run \(k) ended before the kill")
            printed += String(decoding: data, as: UTF8.self)
        }
        let resumed = try runGeomon(args + ["--db", db])
        #expect(resumed.exitCode == 0)
        printed += resumed.stdout
        let stored = try runGeomon(["events", "--db", db, "--format", "json"])
        #expect(stored.stdout == referenceEvents.stdout)
        // What was printed across the runs is the reference, in order, with nothing twice
        // (an event committed just before a kill may miss its line; it is in the database).
        let printedLines = printed.split(separator: "\n")
        let referenceLines = reference.stdout.split(separator: "\n")
        #expect(Set(printedLines).count == printedLines.count)
        #expect(printedLines.allSatisfy { referenceLines.contains($0) })
        let status = try runGeomon(["status", "--db", db, "--format", "json"])
        let a = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let b = try #require(try JSONSerialization.jsonObject(with: Data(runGeomon(["status", "--db", dir.path("ref.db"), "--format", "json"]).stdout.utf8)) as? [String: Any])
        #expect(a["fences"] as? [[String: AnyHashable]] == b["fences"] as? [[String: AnyHashable]])
        #expect(a["last_fix_time"] as? String == "2010-04-03T14:19:29Z")
        #expect(a["movement"] as? [String: AnyHashable] == b["movement"] as? [String: AnyHashable])
        #expect(a["mode"] as? [String: AnyHashable] == b["mode"] as? [String: AnyHashable])
    }

    @Test func eventsStatusAndExportReadTheDatabase() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = dir.path("e.db")
        // The recorded fixes only (no 1 Hz fill between them): the export gives the recording back.
        let replay = try runGeomon(["replay", "--profile", Self.fixture("swiss-drive.profile.yaml"), Self.fixture("swiss-drive.jsonl"), "--db", db, "--format", "json",
                                    "--always-on", "--tracking-interval", "0"])
        #expect(replay.exitCode == 0)
        let all = try Self.objects(replay.stdout)

        let since = try runGeomon(["events", "--db", db, "--format", "json", "--since", "2010-04-03T13:00:00Z"])
        #expect(since.exitCode == 0)
        #expect(try Self.objects(since.stdout).count == all.filter { ($0["time"] as? String ?? "") >= "2010-04-03T13:00:00Z" }.count)
        #expect(try runGeomon(["events", "--db", db, "--since", "yesterday"]).exitCode == 64)
        let text = try runGeomon(["events", "--db", db])
        #expect(text.stdout.split(separator: "\n").count == all.count)

        let status = try runGeomon(["status", "--db", db, "--format", "json"])
        let s = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        #expect(s["profile"] as? String == "swiss-drive")
        #expect((s["last_fix"] as? [String: Any])?["time"] as? String == "2010-04-03T14:19:29Z")
        #expect(s["events"] as? Int == all.count)
        #expect(s["pending_deliveries"] as? Int == 0)
        #expect(s["other_fences"] as? String == "outside")
        let fences = try #require(s["fences"] as? [[String: Any]])
        #expect(fences.contains { $0["id"] as? String == "end" && $0["state"] as? String == "inside" })
        #expect(try runGeomon(["status", "--db", db]).stdout.contains("profile:            swiss-drive"))

        let jsonl = try runGeomon(["export", "--db", db, "--format", "jsonl"])
        let lines = jsonl.stdout.split(separator: "\n")
        #expect(lines.count == 10_327 + all.count)
        #expect(lines.first == "{\"time\":\"2010-04-03T11:22:25.844Z\",\"lat\":47.332895,\"lon\":7.821065,\"accuracy_m\":12.5}")
        let gpx = try runGeomon(["export", "--db", db, "--format", "gpx"])
        #expect(gpx.stdout.components(separatedBy: "<trkpt ").count - 1 == 10_327)
        #expect(gpx.stdout.components(separatedBy: "<wpt ").count - 1 == all.count)
        let geojson = try runGeomon(["export", "--db", db, "--format", "geojson", "--since", "2010-04-03T14:00:00Z"])
        let g = try #require(try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8)) as? [String: Any])
        let features = try #require(g["features"] as? [[String: Any]])
        #expect(features.count == 1 + all.filter { ($0["time"] as? String ?? "") >= "2010-04-03T14:00:00Z" }.count)
        #expect(try runGeomon(["export", "--db", db]).exitCode == 64)
    }

    @Test func readingCommandsRefuseMissingOrForeignDatabases() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        for command in ["events", "status"] {
            let missing = try runGeomon([command, "--db", dir.path("missing.db")])
            #expect(missing.exitCode == 66)
            #expect(missing.stderr.hasPrefix("geomon: error: "))
        }
        let foreign = try dir.write("notes.db", "my precious notes\n", mode: 0o644)
        let result = try runGeomon(["events", "--db", foreign])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("not a geomon database"))
        // The writing commands too, before a warning about the file's mode as a database's or a
        // lock file beside it.
        let replay = try runGeomon(["replay", "--profile", Self.fixture("telit-parked.profile.yaml"), Self.fixture("telit-static.jsonl"), "--db", foreign])
        #expect(replay.exitCode == 65 && replay.stderr.hasSuffix("geomon: error: \(foreign): not a geomon database (not an SQLite file); the file was left untouched\n")
                && !replay.stderr.contains("readable by other users"), "\(replay.stderr)")
        let run = try runGeomon(["run", "--profile", Self.fixture("telit-parked.profile.yaml"), "--db", foreign, "--exit-after", "1"])
        #expect(run.exitCode == 1 && run.stderr.contains("not a geomon database") && !run.stderr.contains("readable by other users"), "\(run.stderr)")
        #expect(try String(contentsOfFile: foreign, encoding: .utf8) == "my precious notes\n")
        #expect(!FileManager.default.fileExists(atPath: foreign + ".lock"))
        #expect(try runGeomon(["events"]).exitCode == 64)
    }

    @Test func aProgressBarGoesToStderrOnlyWhenItIsATerminal() throws {
        let args = ["replay", "--profile", Self.fixture("swiss-drive.profile.yaml"), Self.fixture("swiss-drive.jsonl"), "--no-hooks", "--always-on"]
        let piped = try runGeomon(args)
        #expect(piped.exitCode == 0 && !piped.stderr.contains("\r") && piped.stderr.hasPrefix("replay: energy:"))
        // util-linux `script` gives the child a pseudo-terminal; stdout is discarded inside it.
        let command = ([TestSupport.geomonBinary.path] + args).map { "'\($0)'" }.joined(separator: " ") + " >/dev/null"
        let tty = try runProcess(URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"])
        #expect(tty.exitCode == 0)
        #expect(tty.stdout.contains("] 50% of the recording, 2010-04-03T12:5"), "\(tty.stdout.suffix(300))")
        #expect(tty.stdout.contains("] 100% of the recording, 10327 fixes"), "\(tty.stdout.suffix(300))")
    }

    /// An output that names a track (by any path: a hard link too), the profile, the database
    /// or another output is refused before anything is written; devices are no files to
    /// protect; `-` is standard output for `--report` only. One that cannot be written (no such
    /// directory, a directory) is refused before the replay runs, not after it.
    @Test func outputsThatWouldOverwriteAnInputOrEachOtherAreRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let track = dir.path("drive.jsonl"), hard = dir.path("hard.jsonl")
        try FileManager.default.copyItem(atPath: Self.fixture("swiss-drive.jsonl"), toPath: track)
        #expect(link(track, hard) == 0)
        let profile = Self.fixture("swiss-drive.profile.yaml")
        let before = try Data(contentsOf: URL(fileURLWithPath: track))
        func replay(_ extra: [String]) throws -> ProcessResult {
            try runGeomon(["replay", "--profile", profile, "--no-hooks", track] + extra)
        }
        for (extra, message) in [
            (["--svg", hard], "option '--svg' names '\(hard)', a track, which it would overwrite"),
            (["--policy-log", profile], "option '--policy-log' names '\(profile)', the file --profile names, which it would overwrite"),
            (["--svg", dir.path("a"), "--report", dir.path("a")], "options '--report' and '--svg' name the same file"),
            (["--policy-log", "-"], "option '--policy-log' takes a file name, not '-'"),
            (["--svg", dir.path("missing/x.svg")], "cannot write \(dir.path("missing/x.svg")) (--svg): No such file or directory"),
            (["--report", dir.path("")], "(--report): it is a directory"),
        ] {
            let result = try replay(extra)
            // A misuse exits 64; an output that cannot be written 1, as a failed write would.
            #expect(result.exitCode == (message.hasPrefix("cannot write") || message.hasPrefix("(") ? 1 : 64) && result.stderr.contains(message),
                    "\(extra): \(result.stderr)")
            #expect(result.stdout.isEmpty && !result.stderr.contains("replay: energy"), "\(extra): \(result.stdout.prefix(200))")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: track)) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.path("a")))
        #expect(try replay(["--svg", "/dev/null", "--policy-log", "/dev/null"]).exitCode == 0)
    }
}
