import Foundation
import GeomonCore
import GeomonTestSupport
import Testing

/// `geomon replay` with the power policy: the receiver model, the energy report, the pictures.
@Suite struct ReplayPowerCommandTests {
    static func fixture(_ name: String) -> String { TestSupport.fixture("replay/\(name)").path }

    static func json(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    static func xmllint(_ path: String) throws -> ProcessResult {
        try runProcess(URL(fileURLWithPath: "/usr/bin/xmllint"), ["--noout", path])
    }

    @Test func compareAlwaysOnWritesADeterministicReportAndPrintsThePolicysEvents() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let base = ["replay", "--profile", Self.fixture("swiss-drive.profile.yaml"), Self.fixture("swiss-drive.jsonl"),
                    "--no-hooks", "--format", "json", "--compare-always-on"]
        let first = try runGeomon(base + ["--report", dir.path("a.json")])
        #expect(first.exitCode == 0, "\(first.stderr)")
        let second = try runGeomon(base + ["--report", dir.path("b.json")])
        #expect(second.exitCode == 0)
        let a = try String(contentsOfFile: dir.path("a.json"), encoding: .utf8)
        #expect(a == (try String(contentsOfFile: dir.path("b.json"), encoding: .utf8)))
        #expect(first.stdout == second.stdout)

        let report = try Self.json(dir.path("a.json"))
        for key in ["track_s", "fixes_used", "gnss_on_s", "duty_cycle", "wakeups", "power_method", "gnss_powered_s", "energy_mwh", "events", "baseline", "match", "oracle"] {
            #expect(report[key] != nil, "missing \(key)")
        }
        let fixesUsed = try #require(report["fixes_used"] as? Int)
        let recorded = try #require(report["fixes_recorded"] as? Int)
        #expect(recorded == 10_327)
        #expect(fixesUsed > 0 && fixesUsed < recorded / 2, "the policy withholds most fixes: \(fixesUsed)")
        let baseline = try #require(report["baseline"] as? [String: Any])
        let onSeconds = try #require(report["gnss_on_s"] as? Double)
        let baselineOn = try #require(baseline["gnss_on_s"] as? Double)
        #expect(onSeconds < baselineOn / 3)
        let match = try #require(report["match"] as? [String: Any])
        let recall = try #require(match["recall"] as? Double)
        #expect(recall > 0.9 && recall <= 1)
        let latencies = try #require(match["latencies_s"] as? [Double])
        #expect(latencies.count == report["events"] as? Int)
        // Within ± max_sleep; a fix interpolated between two recorded ones may see a crossing
        // before the always-on receiver's next recorded fix does.
        #expect(latencies.allSatisfy { abs($0) <= 600 })
        let oracle = try #require(report["oracle"] as? [String: Any])
        #expect(try #require(oracle["gnss_on_s"] as? Double) < onSeconds)
        // Why the receiver was on: the seconds by reason add up to the on-time.
        let byReason = try #require(report["on_by_reason"] as? [String: Double])
        #expect(abs(byReason.values.reduce(0, +) - onSeconds) < 0.01)
        #expect(byReason["acquire scheduled-wake"] != nil)
        // The printed events are the engine's decisions on the delivered fixes: as many as reported.
        let printed = first.stdout.split(separator: "\n").count
        #expect(printed == report["events"] as? Int)
        #expect(first.stderr.contains("replay: energy: gnss on"))
        #expect(first.stderr.contains("of always-on"))
    }

    @Test func alwaysOnDeliversEveryFixAndTheTextReportIsATable() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = try runGeomon(["replay", "--profile", Self.fixture("telit-parked.profile.yaml"), Self.fixture("telit-static.jsonl"),
                                    "--no-hooks", "--always-on", "--report", dir.path("r.txt")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let table = try String(contentsOfFile: dir.path("r.txt"), encoding: .utf8)
        #expect(table.contains("always-on"))
        #expect(table.contains("duty cycle %"))
        #expect(table.contains("energy mWh"))
        let json = try runGeomon(["replay", "--profile", Self.fixture("telit-parked.profile.yaml"), Self.fixture("telit-static.jsonl"),
                                  "--no-hooks", "--always-on", "--format", "json", "--report", dir.path("r.json")])
        #expect(json.exitCode == 0)
        let report = try Self.json(dir.path("r.json"))
        #expect(report["always_on"] as? Bool == true)
        #expect(report["wakeups"] as? Int == 1)
    }

    @Test func interpolateGapsIsAWhatIfThatChangesOnlyTheReceiverModel() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let args = ["replay", "--profile", Self.fixture("swiss-drive.profile.yaml"), Self.fixture("swiss-drive.jsonl"),
                    "--no-hooks", "--format", "json", "--compare-always-on"]
        let strict = try runGeomon(args + ["--report", dir.path("a.json"), "--interpolate-gaps", "10"])
        let wide = try runGeomon(args + ["--report", dir.path("b.json")])
        #expect(strict.exitCode == 0 && wide.exitCode == 0, "\(strict.stderr) \(wide.stderr)")
        let a = try Self.json(dir.path("a.json")), b = try Self.json(dir.path("b.json"))
        // The drive has recording gaps of 11–208 s: bridged (the default, up to 60 s), a wake
        // inside one gets its fix after the TTFF instead of waiting for the next recorded fix.
        #expect(try #require(b["gnss_acquire_s"] as? Double) < (try #require(a["gnss_acquire_s"] as? Double)))
        #expect(try runGeomon(args + ["--interpolate-gaps", "-1"]).exitCode == 64)
    }

    @Test func policyLogListsEveryActionAndDeliveredFixInTimeOrder() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let args = ["replay", "--profile", Self.fixture("swiss-drive.profile.yaml"), Self.fixture("swiss-drive.jsonl"),
                    "--no-hooks", "--format", "json", "--report", dir.path("r.json"), "--policy-log", dir.path("log.txt")]
        let result = try runGeomon(args)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: dir.path("log.txt"), encoding: .utf8).split(separator: "\n")
        let report = try Self.json(dir.path("r.json"))
        let used = try #require(report["fixes_used"] as? Int), interpolated = try #require(report["fixes_interpolated"] as? Int)
        #expect(lines.filter { $0.contains(" fix ") }.count == used + interpolated)
        #expect(lines.filter { $0.contains(" gnss-on ") }.count == report["wakeups"] as? Int)
        #expect(lines.first?.contains(" gnss-on start ") == true)
        #expect(lines.contains { $0.contains(" gnss-off sleep bound=") })
        let times = lines.compactMap { UTCTime(rfc3339: String($0.prefix { $0 != " " })) }
        #expect(times.count == lines.count)
        #expect(times == times.sorted())
        // Byte-identical on a second run.
        _ = try runGeomon(args.dropLast(2) + ["--policy-log", dir.path("again.txt")])
        #expect(try String(contentsOfFile: dir.path("again.txt"), encoding: .utf8) == (try String(contentsOfFile: dir.path("log.txt"), encoding: .utf8)))
    }

    @Test func badPowerOptionsAreUsageOrInputErrors() throws {
        let args = ["replay", "--profile", Self.fixture("telit-parked.profile.yaml"), Self.fixture("telit-static.jsonl")]
        #expect(try runGeomon(args + ["--always-on", "--compare-always-on"]).exitCode == 64)
        let missing = try runGeomon(args + ["--coarse", "/nonexistent/coarse.jsonl"])
        #expect(missing.exitCode == 66)
        // After the profile's warnings (its 60 m fence is small for min_accuracy 50 m).
        #expect(missing.stderr.split(separator: "\n").last?.hasPrefix("geomon: error: ") == true, "\(missing.stderr)")
    }

    @Test func replaySVGAndEventsSVGAreWellFormedAndShowTheRun() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = try runGeomon(["replay", "--profile", Self.fixture("swiss-drive.profile.yaml"), Self.fixture("swiss-drive.jsonl"),
                                    "--no-hooks", "--compare-always-on", "--svg", dir.path("run.svg"), "--db", dir.path("run.db")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try Self.xmllint(dir.path("run.svg")).exitCode == 0)
        let svg = try String(contentsOfFile: dir.path("run.svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<?xml") || svg.hasPrefix("<svg"))
        #expect(!svg.contains("<script"))
        #expect(svg.contains("class=\"wake\""))
        #expect(svg.contains("scheduled-wake"))
        #expect(svg.contains("<title>start</title>"))
        #expect(svg.contains("class=\"band-off\""))

        let events = try runGeomon(["events", "--db", dir.path("run.db"), "--svg", dir.path("db.svg"),
                                    "--profile", Self.fixture("swiss-drive.profile.yaml")])
        #expect(events.exitCode == 0, "\(events.stderr)")
        #expect(try Self.xmllint(dir.path("db.svg")).exitCode == 0)
        let dbSVG = try String(contentsOfFile: dir.path("db.svg"), encoding: .utf8)
        #expect(dbSVG.contains("<title>start</title>"))
        // The receiver switches replay stored come back: wakes, their reasons, the on-time.
        #expect(dbSVG.contains("scheduled-wake"))
        #expect(dbSVG.contains("class=\"band-off\""))
        let onTime = try #require(svg.firstMatch(of: /receiver on [0-9.]+% of the time/)).output
        #expect(dbSVG.contains(onTime), "\(onTime)")
        #expect(try runGeomon(["events", "--db", dir.path("run.db"), "--svg", dir.path("nodir/x.svg")]).exitCode == 1)
    }
}
