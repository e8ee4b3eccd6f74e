import Foundation
import GeomonTestSupport
import Testing

struct BenchCommandTests {
    /// A fence file is streamed into the index: loading it adds about the index's size and a
    /// window of the file to the resident set, never the file itself (10,000 fences, 15 MB; the
    /// full-size figures are `scripts/bench-fences.sh --memory`).
    @Test func loadingAFenceFileCostsItsIndexNotTheFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let generated = try runGeomon(["bench", "generate", "--fences", "10000", "--points", "100", "--seed", "5", "--out", dir.path("g"), "--track-fixes", "10"])
        #expect(generated.exitCode == 0, "\(generated.stderr)")
        let bench = try runGeomon(["bench", "fences", "--fences", dir.path("g/fences.geojson"), "--points", dir.path("g/points.csv")])
        #expect(bench.exitCode == 0, "\(bench.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(bench.stdout.utf8)) as? [String: Any])
        let fileMB = Double(try FileManager.default.attributesOfItem(atPath: dir.path("g/fences.geojson"))[.size] as? Int ?? 0) / 1e6
        let indexMB = Double(try #require(report["index_bytes"] as? Int)) / 1e6
        let growth = try #require(report["load_rss_growth_mb"] as? Double)
        #expect(fileMB > 14)
        // Less than the index and the file together: a loader that held the file would add at
        // least both (the rest is the mapped window, the fences' ids and the allocator's
        // arenas, which vary by some 0.3 MB from run to run).
        #expect(growth < indexMB + fileMB, "load added \(growth) MB for a \(fileMB) MB file and a \(indexMB) MB index")
        #expect(try #require(report["load_peak_rss_mb"] as? Double) <= (try #require(report["load_rss_budget_mb"] as? Double)))
    }

    @Test func generatedDataIsDeterministicValidAndBenchmarkable() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        for out in ["a", "b"] {
            let generated = try runGeomon(["bench", "generate", "--fences", "300", "--points", "200", "--seed", "7", "--out", dir.path(out)])
            #expect(generated.exitCode == 0, "\(generated.stderr)")
        }
        let a = try Data(contentsOf: URL(fileURLWithPath: dir.path("a/fences.geojson")))
        let b = try Data(contentsOf: URL(fileURLWithPath: dir.path("b/fences.geojson")))
        #expect(a == b, "the same seed gives the same fences")

        // Every generated polygon passes the loader's validity rules (holes inside shells).
        let query = try runGeomon(["query", "--fences", dir.path("a/fences.geojson"), "0", "0"])
        #expect(query.exitCode == 0, "\(query.stderr)")

        let bench = try runGeomon(["bench", "fences", "--fences", dir.path("a/fences.geojson"), "--points", dir.path("a/points.csv")])
        #expect(bench.exitCode == 0, "\(bench.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(bench.stdout.utf8)) as? [String: Any]
        #expect(report?["fences"] as? Int == 300)
        #expect(report?["points"] as? Int == 200)
        #expect(((report?["mean_inside"] as? Double) ?? 0) > 0.2, "constant density: a random point is inside ~0.7 fences")
        // Both rates: the batch query (spatial order) and one query per point; the bench
        // fails if their answers differ.
        #expect(((report?["query_points_per_s"] as? Int) ?? 0) > 0)
        #expect(((report?["query_points_per_s_single"] as? Int) ?? 0) > 0)
        #expect(report?["checksum"] is Double)

        // --serve: the build line, then one pass per line of stdin (the interleaved
        // benchmark's protocol), each with the same answers as the plain run; a `build` line
        // builds again and reports the time and the same index size.
        let served = try runGeomon(["bench", "fences", "--fences", dir.path("a/fences.geojson"), "--points", dir.path("a/points.csv"), "--serve"],
                                   stdin: "go\ngo\nbuild\ngo\n")
        #expect(served.exitCode == 0, "\(served.stderr)")
        let lines = served.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 5)
        #expect(lines.first??["fences"] as? Int == 300)
        #expect(lines.first??["build_s"] is Double)
        let rebuilt = lines.count == 5 ? lines[3] : nil
        #expect(rebuilt?["build_s"] is Double && rebuilt?["query_points_per_s"] == nil)
        // The same size up to the allocator's rounding of array capacities.
        let firstBytes = Double(lines.first??["index_bytes"] as? Int ?? 0), rebuiltBytes = Double(rebuilt?["index_bytes"] as? Int ?? -1)
        #expect(firstBytes > 0 && abs(rebuiltBytes - firstBytes) <= 0.001 * firstBytes, "\(rebuiltBytes) vs \(firstBytes)")
        let checksum = report?["checksum"] as? Double ?? .nan
        for (i, pass) in lines.enumerated().dropFirst() where i != 3 {
            #expect(((pass?["query_points_per_s"] as? Int) ?? 0) > 0)
            #expect(abs(((pass?["checksum"] as? Double) ?? .nan) - checksum) < 0.5, "the same answers as the plain run")
        }
        #expect(try runGeomon(["bench", "generate", "--fences", "3", "--points", "1", "--seed", "1", "--out", dir.path("c"), "--serve"]).exitCode == 64)
    }
}
