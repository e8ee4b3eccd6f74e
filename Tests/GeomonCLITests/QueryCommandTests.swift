import Foundation
import GeomonTestSupport
import Testing

struct QueryCommandTests {
    static let fences = TestSupport.fixture("query/fences.geojson").path

    @Test func onePointPrintsInsideSortedAndNearestBoundary() throws {
        let result = try runGeomon(["query", "--fences", Self.fences, "47.005", "8.005"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        // 0.005° of longitude at 47.005° is ~380 m: the depot's east/west edges are nearest.
        #expect(result.stdout == "{\"lat\":47.005,\"lon\":8.005,\"inside\":[\"depot\",\"district\"],\"nearest\":{\"fence\":\"depot\",\"distance_m\":-380.24}}\n")
    }

    @Test func stdinAcceptsBothFormatsAndReportsBadLinesWithNumbers() throws {
        let input = "47.005,8.005\n\n# comment\n47.055 7.955\nnonsense\n47.2 8.0\n91,0\n"
        let result = try runGeomon(["query", "--fences", Self.fences], stdin: input)
        #expect(result.exitCode == 65)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("{\"lat\":47.005,\"lon\":8.005,\"inside\":[\"depot\",\"district\"]") == true)
        // In the district's hole: inside nothing; the hole's east/west edges are 0.005° of longitude (~379 m) away.
        #expect(lines.count > 1 && lines[1].hasPrefix("{\"lat\":47.055,\"lon\":7.955,\"inside\":[],\"nearest\":{\"fence\":\"district\",\"distance_m\":379."))
        #expect(lines.count > 2 && lines[2].hasPrefix("{\"lat\":47.2,\"lon\":8,\"inside\":[],\"nearest\":{\"fence\":\"district\",\"distance_m\":111"))
        #expect(result.stderr.contains("geomon: error: <stdin>:5:"))
        #expect(result.stderr.contains("geomon: error: <stdin>:7:"))
        #expect(!result.stderr.contains("<stdin>:1:"))
    }

    @Test func antimeridianFenceContainsPointsOnBothSides() throws {
        let result = try runGeomon(["query", "--fences", Self.fences], stdin: "-16.95 179.95\n-16.95,-179.95\n-16.95 179.0\n")
        #expect(result.exitCode == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.first?.contains("\"inside\":[\"dateline \\\"east\\\"\"]") == true)
        #expect(lines.count > 1 && lines[1].contains("\"inside\":[\"dateline \\\"east\\\"\"]"))
        #expect(lines.count > 2 && lines[2].contains("\"inside\":[]"))
    }

    @Test func outputIsDeterministic() throws {
        let input = (0..<50).map { "\(46.9 + Double($0) * 0.004) \(7.9 + Double($0) * 0.004)" }.joined(separator: "\n")
        let a = try runGeomon(["query", "--fences", Self.fences], stdin: input)
        let b = try runGeomon(["query", "--fences", Self.fences], stdin: input)
        #expect(a.exitCode == 0)
        #expect(a.stdout == b.stdout)
        #expect(a.stdout.split(separator: "\n").count == 50)
    }

    @Test func noFencesGivesNullNearest() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write("empty.geojson", "{\"type\":\"FeatureCollection\",\"features\":[]}")
        let result = try runGeomon(["query", "--fences", path, "1", "2"])
        #expect(result.exitCode == 0)
        #expect(result.stdout == "{\"lat\":1,\"lon\":2,\"inside\":[],\"nearest\":null}\n")
    }

    @Test func usageAndInputErrors() throws {
        let neither = try runGeomon(["query", "1", "2"])
        #expect(neither.exitCode == 64)
        #expect(neither.stderr.contains("error: give exactly one of --profile P or --fences FILE.geojson"))
        let badPoint = try runGeomon(["query", "--fences", Self.fences, "100", "2"])
        #expect(badPoint.exitCode == 64)
        let missing = try runGeomon(["query", "--fences", "/nonexistent/fences.geojson", "1", "2"])
        #expect(missing.exitCode == 66)
        #expect(missing.stderr.contains("geomon: error: cannot read GeoJSON file '/nonexistent/fences.geojson'"))
        let polar = try TemporaryDirectory()
        defer { polar.remove() }
        let path = try polar.write("polar.geojson", "{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"id\":\"pole\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[[0,86],[10,86],[10,88],[0,86]]]}}]}")
        let limits = try runGeomon(["query", "--fences", path, "1", "2"])
        #expect(limits.exitCode == 65)
        #expect(limits.stderr.contains("'pole'"))
        #expect(limits.stderr.contains("poles are not supported"))
    }
}
