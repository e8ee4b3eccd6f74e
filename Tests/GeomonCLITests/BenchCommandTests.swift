import Foundation
import GeomonTestSupport
import Testing

struct BenchCommandTests {
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
    }
}
