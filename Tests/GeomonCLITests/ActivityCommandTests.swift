import Foundation
import GeomonTestSupport
import Testing

/// The activity from the command line: the accelerometer's classifier scored on a public
/// labelled recording (`geomon bench activity`), and `geomon replay --activity` declared,
/// derived from the recording's speeds, or read from a motion source's recording.
struct ActivityCommandTests {
    static let profile = TestSupport.fixture("replay/swiss-drive.profile.yaml").path
    static let track = TestSupport.fixture("replay/swiss-drive.jsonl").path

    /// The JSON report of a replay of the Swiss drive against always-on, with `extra` options.
    static func report(_ extra: [String]) throws -> [String: Any] { try report(extra, of: profile) }

    static func report(_ extra: [String], of profile: String) throws -> [String: Any] {
        let result = try runGeomon(["replay", "--profile", profile, track, "--no-hooks", "--format", "json", "--compare-always-on",
                                    "--report", "-"] + extra)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let start = try #require(result.stdout.range(of: "{\n"))
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout[start.lowerBound...].utf8)) as? [String: Any])
    }

    static func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func theClassifierTellsStillFootAndVehicleApartOnTheLabelledRecording() throws {
        // Each recording on its own, at the default 2 Hz: every scored second right.
        let alone = try runGeomon(["bench", "activity", TestSupport.fixture("accel/accel.csv").path])
        #expect(alone.exitCode == 0, "\(alone.stderr)")
        let rows = try Self.lines(alone.stdout)
        let summary = try #require(rows.last)
        #expect(try #require(summary["accuracy"] as? Double) >= 0.99, "\(alone.stdout)")
        #expect(rows.prefix(3).map { $0["true"] as? String } == ["still", "foot", "vehicle"])
        // Back to back (each start a change of activity): a change is noticed within the
        // stated latency, one window (10 s).
        let chained = try runGeomon(["bench", "activity", TestSupport.fixture("accel/accel.csv").path, "--changes"])
        let segments = try #require(try Self.lines(chained.stdout).last?["segments"] as? [[String: Any]])
        #expect(segments.count == 4)
        for segment in segments {
            #expect(try #require(segment["latency_s"] as? Double) <= 10, "\(chained.stdout)")
        }
        let bad = try runGeomon(["bench", "activity", "/nonexistent.csv"])
        #expect(bad.exitCode == 66)
    }

    /// One user's drives and walks from US-TransportationMode (a phone carried as its owner
    /// pleased, Tests/Fixtures/accel/tmd): a phone handled in the car reads as steps, and a
    /// walker sensed in a car is what plans a sleep short of a boundary. With foot believed
    /// after a vehicle only on a majority of the windows over 2 minutes, the drives are taken
    /// for a walk at most a fifth as often as when every window is believed. The price is paid
    /// on the walks: this user's are short (1–3 minutes), and one that begins with a window
    /// read as a vehicle stays one; still, at least a third of their seconds read as walks.
    @Test func aPhoneHandledInACarIsNotTakenForAWalker() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let csv = dir.url.appendingPathComponent("damiano.csv").path
        let unzip = try runProcess(URL(fileURLWithPath: "/bin/sh"),
                                   ["-c", "gzip -dc \"$0\" > \"$1\"", TestSupport.fixture("accel/tmd/damiano.csv.gz").path, csv])
        #expect(unzip.exitCode == 0, "\(unzip.stderr)")
        func rows(_ extra: [String]) throws -> [String: [String: Any]] {
            let result = try runGeomon(["bench", "activity", csv] + extra)
            #expect(result.exitCode == 0, "\(result.stderr)")
            return Dictionary(uniqueKeysWithValues: try Self.lines(result.stdout).dropLast().compactMap { row in
                (row["true"] as? String).map { ($0, row) }
            })
        }
        func count(_ row: [String: Any]?, _ said: String) -> Int { row?[said] as? Int ?? -1 }
        let settled = try rows([]), eager = try rows(["--settle", "0"])
        let drive = settled["vehicle"], walk = settled["foot"]
        let driveSeconds = ["still", "foot", "vehicle"].map { count(drive, $0) }.reduce(0, +)
        #expect(driveSeconds > 2_000)
        // Every window believed: a fifth of the drives' seconds said foot.
        #expect(count(eager["vehicle"], "foot") * 5 >= driveSeconds, "\(eager)")
        // The majority rule: at most a fifth of that, and under 5 % of the drives.
        #expect(count(drive, "foot") * 5 <= count(eager["vehicle"], "foot"), "\(settled)")
        #expect(count(drive, "foot") * 20 <= driveSeconds, "\(settled)")
        // The walks: 438 of 1,006 seconds (649 with every window believed).
        let walkSeconds = ["still", "foot", "vehicle"].map { count(walk, $0) }.reduce(0, +)
        #expect(walkSeconds > 900 && count(walk, "foot") * 3 >= walkSeconds, "\(settled)")
    }

    @Test func replayPlansWithTheActivityDeclaredDerivedOrRecorded() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = Self.profile, track = Self.track
        let report = { (extra: [String]) in try Self.report(extra) }
        // A car declared as a walker: the motorway breaks foot's 4 m/s at once; the break is
        // reported with its figures and the bound widens; nothing always-on saw is missed.
        let walker = try report(["--activity", "foot"])
        #expect(walker["activity"] as? String == "foot")
        let violations = try #require(walker["violations"] as? [[String: Any]])
        #expect(violations.count >= 1)
        let first = try #require(violations.first)
        #expect(try #require(first["planned_max_speed_mps"] as? Double) == 4)
        #expect(try #require(first["widened_max_speed_mps"] as? Double) > 4)
        #expect(try #require((walker["match"] as? [String: Any])?["recall"] as? Double) >= 0.99)
        // Derived from the speeds: the drive is a vehicle.
        let derived = try report(["--activity", "derive"])
        #expect((derived["activity"] as? String)?.hasPrefix("derived (") == true)
        #expect((derived["activity"] as? String)?.contains("vehicle") == true, "\(derived["activity"] ?? "")")
        // Recorded: what a motion source said, with its times.
        let first0 = try #require(try String(contentsOfFile: track, encoding: .utf8).split(separator: "\n").first)
        let start = try #require((try JSONSerialization.jsonObject(with: Data(first0.utf8)) as? [String: Any])?["time"] as? String)
        let file = try dir.write("activity.jsonl", "{\"time\": \"\(start)\", \"activity\": \"vehicle\"}\n")
        let recorded = try report(["--activity", file])
        #expect(recorded["activity"] as? String == "recorded (vehicle 1)")
        #expect((recorded["violations"] as? [Any])?.isEmpty == true)
        // A recording without times, or something that is neither: clear errors.
        let untimed = try dir.write("untimed.jsonl", "{\"activity\": \"vehicle\"}\n")
        let noTime = try runGeomon(["replay", "--profile", profile, track, "--no-hooks", "--activity", untimed])
        #expect(noTime.exitCode == 65 && noTime.stderr.contains("\"time\""), "\(noTime.stderr)")
        let neither = try runGeomon(["replay", "--profile", profile, track, "--no-hooks", "--activity", "horse"])
        #expect(neither.exitCode == 64 && neither.stderr.contains("option '--activity' must be foot, bicycle, vehicle, boat, air, any, derive or a recording (got 'horse')"), "\(neither.stderr)")
        let gone = try runGeomon(["replay", "--profile", profile, track, "--no-hooks", "--activity", "/nonexistent/activity.jsonl"])
        #expect(gone.exitCode == 66, "\(gone.stderr)")
    }

    /// `--receiver-ttff-hot`: the modelled receiver's hot start apart from the profile's plan
    /// (2 s). The policy measures the first fixes after its wakes and replans with them: a
    /// faster receiver costs less, a slower one more, and neither loses an event always-on sees.
    /// The receiver is switched (`power: ubx`): with `watch` only wakes after gpsd's 60 s
    /// release are measured, and the drive's sleeps are shorter.
    @Test func replayModelsAReceiverFasterOrSlowerThanThePlan() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let text = try String(contentsOfFile: Self.profile, encoding: .utf8)
        let profile = try dir.write("ubx.yaml", text.replacingOccurrences(of: "\"plugin\": \"gpsd\",", with: "\"plugin\": \"gpsd\", \"power\": \"ubx\","))
        let track = Self.track
        let report = { (extra: [String]) in try Self.report(extra, of: profile) }
        func on(_ r: [String: Any]) throws -> Double { try #require(r["gnss_on_s"] as? Double) }
        func recall(_ r: [String: Any]) throws -> Double { try #require((r["match"] as? [String: Any])?["recall"] as? Double) }
        let planned = try report([]), fast = try report(["--receiver-ttff-hot", "1"]), slow = try report(["--receiver-ttff-hot", "3"])
        #expect(planned["ttff_hot_learned_s"] as? Double == nil)
        #expect(fast["ttff_hot_learned_s"] as? Double == 1 && fast["restart_ttff_s"] as? Double == 1)
        #expect(slow["ttff_hot_learned_s"] as? Double == 3 && slow["restart_ttff_s"] as? Double == 3)
        #expect(try on(fast) < on(planned) && on(planned) < on(slow))
        // The oracle's hot starts are the modelled receiver's too.
        let oracle = { (r: [String: Any]) in (r["oracle"] as? [String: Any])?["gnss_on_s"] as? Double ?? 0 }
        #expect(oracle(fast) < oracle(planned))
        #expect(try recall(planned) == 1 && recall(fast) == 1 && recall(slow) == 1)
        let bad = try runGeomon(["replay", "--profile", profile, track, "--no-hooks", "--receiver-ttff-hot", "0"])
        #expect(bad.exitCode == 64 && bad.stderr.contains("--receiver-ttff-hot"), "\(bad.stderr)")
    }
}
