import Foundation
import GeomonTestSupport
import Testing

/// A large fence set re-executes geomon with its heap on huge pages (`HeapPages`): the
/// decision follows the fence data's size and `GEOMON_HUGE_PAGES`, the answers never change,
/// and children (the coarse command source) see the caller's environment, not the setting.
@Suite(.serialized)
struct HeapPagesTests {
    /// The caller's environment with `changes` applied (nil removes a variable).
    static func environment(_ changes: [String: String?]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["GLIBC_TUNABLES"] = nil
        environment["GEOMON_HUGE_PAGES"] = nil
        for (key, value) in changes { environment[key] = value }
        return environment
    }

    static func bench(_ fences: String, _ points: String, _ changes: [String: String?]) throws -> [String: Any] {
        let result = try runProcess(TestSupport.geomonBinary, ["bench", "fences", "--fences", fences, "--points", points],
                                    environment: environment(changes))
        #expect(result.exitCode == 0, "\(result.stderr)")
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// A copy of `source` padded with trailing whitespace to just over the 64 MiB threshold:
    /// the same fences, a size that counts as a large set.
    static func padded(_ source: String, to path: String) throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: source))
        data.append(Data(repeating: 0x20, count: (64 << 20) + 1 - data.count))
        try data.write(to: URL(fileURLWithPath: path))
    }

    @Test func theDecisionFollowsTheFenceDataSizeAndTheAnswersNeverChange() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let generated = try runGeomon(["bench", "generate", "--fences", "200", "--points", "300", "--seed", "5", "--out", dir.path("set")])
        #expect(generated.exitCode == 0, "\(generated.stderr)")
        let small = dir.path("set/fences.geojson"), points = dir.path("set/points.csv")
        let large = dir.path("large.geojson")
        try Self.padded(small, to: large)

        let runs: [(fences: String, changes: [String: String?], huge: Bool)] = [
            (small, [:], false),                                   // auto, 40 kB of fences
            (small, ["GEOMON_HUGE_PAGES": "on"], true),
            (large, [:], true),                                    // auto, 64 MiB + 1 byte
            (large, ["GEOMON_HUGE_PAGES": "off"], false),
            // A caller's own choice of the glibc setting is left alone.
            (large, ["GLIBC_TUNABLES": "glibc.malloc.hugetlb=0"], false),
        ]
        // An unknown setting says so and acts as auto.
        let unknown = try runProcess(TestSupport.geomonBinary, ["bench", "fences", "--fences", large, "--points", points],
                                     environment: Self.environment(["GEOMON_HUGE_PAGES": "maybe"]))
        #expect(unknown.exitCode == 0 && unknown.stdout.contains("\"heap_huge_pages\":true"))
        #expect(unknown.stderr.contains("GEOMON_HUGE_PAGES=maybe is not auto, on or off; using auto"), "\(unknown.stderr)")
        var checksums: Set<String> = []
        for run in runs {
            let report = try Self.bench(run.fences, points, run.changes)
            #expect(report["heap_huge_pages"] as? Bool == run.huge, "\(run.fences) \(run.changes)")
            #expect(report["fences"] as? Int == 200)
            checksums.insert("\(report["checksum"] ?? "none") \(report["index_bytes"] ?? "none")")
        }
        #expect(checksums.count == 1, "the same answers and index whatever the heap: \(checksums)")
    }

    /// The coarse source (a child, spawned with a clean environment like hooks) records its
    /// own environment, the one geomon was started with (its parent's `/proc/PID/environ`,
    /// fixed at exec: it shows whether geomon re-executed itself) and geomon's process name.
    /// Neither the huge-page tunables geomon re-executed with nor the caller's reach it.
    @Test(arguments: [nil, "glibc.malloc.perturb=0"])
    func childrenGetACleanEnvironmentWhateverTheHeap(tunables: String?) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let generated = try runGeomon(["bench", "generate", "--fences", "20", "--points", "1", "--seed", "2", "--out", dir.path("set")])
        #expect(generated.exitCode == 0, "\(generated.stderr)")
        try Self.padded(dir.path("set/fences.geojson"), to: dir.path("large.geojson"))
        let source = try dir.write("coarse.sh", """
            #!/bin/sh
            tr '\\0' '\\n' < /proc/$PPID/environ > '\(dir.path("geomon.env"))'
            cat /proc/$PPID/comm > '\(dir.path("geomon.comm"))'
            env > '\(dir.path("child.tmp"))' && mv '\(dir.path("child.tmp"))' '\(dir.path("child.env"))'
            """, mode: 0o755)
        let profile = try dir.write("profile.yaml", """
            version: 1
            name: heap-pages
            mode: significant-change
            sources:
              coarse: {plugin: command, exec: ['\(source)'], interval: 5m, accuracy: 1km}
            significant_change: {distance: 2km, min_interval: 10m}
            fences:
              - {geojson: large.geojson}
            """)
        let process = Process()
        process.executableURL = TestSupport.geomonBinary
        process.arguments = ["run", "--profile", profile, "--db", dir.path("run.db")]
        process.environment = Self.environment(["GLIBC_TUNABLES": tunables])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        waitUntil(within: .seconds(max(0, deadline.timeIntervalSinceNow))) { FileManager.default.fileExists(atPath: dir.path("child.env")) || !process.isRunning }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()

        let started = try String(contentsOfFile: dir.path("geomon.env"), encoding: .utf8).split(separator: "\n")
        // (glibc's startup parse leaves NULs for the colons in that copy of the variable.)
        #expect(started.contains { $0.hasPrefix("GEOMON_HEAP_REEXEC=") }, "geomon re-executed itself")
        #expect(started.contains { $0.hasSuffix("glibc.malloc.hugetlb=1") }, "with its heap on huge pages")
        // Under its own name (ps, top, pkill), not "exe".
        #expect(try String(contentsOfFile: dir.path("geomon.comm"), encoding: .utf8) == "geomon\n")
        let seen = try String(contentsOfFile: dir.path("child.env"), encoding: .utf8).split(separator: "\n")
        #expect(seen.filter { $0.hasPrefix("GLIBC_TUNABLES=") }.isEmpty)
        #expect(seen.contains("PATH=/usr/local/bin:/usr/bin:/bin"))
        #expect(!seen.contains { $0.hasPrefix("GEOMON_HEAP_REEXEC=") })
    }
}
