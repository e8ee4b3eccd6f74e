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

    /// A point written to a pipe is answered before the next one arrives (the batch is what
    /// one read delivered), so `geomon query` can sit at the end of a live feed.
    @Test func eachLineIsAnsweredAsItArrives() throws {
        let process = Process()
        process.executableURL = TestSupport.geomonBinary
        process.arguments = ["query", "--fences", Self.fences]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        input.fileHandleForWriting.write(Data("47.005 8.005\n".utf8))
        // The answer comes while standard input is still open (without it the read below
        // would wait for ever: the process is stopped after 10 s, which ends the read).
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 10, execute: watchdog)
        defer { watchdog.cancel() }
        var received = Data()
        while !received.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        #expect(String(decoding: received, as: UTF8.self) == "{\"lat\":47.005,\"lon\":8.005,\"inside\":[\"depot\",\"district\"],\"nearest\":{\"fence\":\"depot\",\"distance_m\":-380.24}}\n")
        input.fileHandleForWriting.write(Data("47.2 8.0".utf8)) // no final newline
        try input.fileHandleForWriting.close()
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: rest, as: UTF8.self).hasPrefix("{\"lat\":47.2,\"lon\":8,"))
    }

    /// Thousands of points in one read are answered as a batch: the same lines, in input order,
    /// as one query per point.
    @Test func aLargeInputIsAnsweredInOrderAsSinglePointsWould() throws {
        var points: [String] = []
        var state: UInt64 = 7
        func next() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53)
        }
        for _ in 0..<5000 { points.append(String(format: "%.6f,%.6f", 46.9 + next() * 0.25, 7.9 + next() * 0.25)) }
        let all = try runGeomon(["query", "--fences", Self.fences], stdin: points.joined(separator: "\n") + "\n")
        #expect(all.exitCode == 0, "\(all.stderr)")
        let lines = all.stdout.split(separator: "\n")
        #expect(lines.count == points.count)
        for i in stride(from: 0, to: points.count, by: 499) {
            let parts = points[i].split(separator: ",").map(String.init)
            let one = try runGeomon(["query", "--fences", Self.fences, parts[0], parts[1]])
            #expect(one.stdout == lines[i] + "\n", "point \(i)")
        }
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
        #expect(missing.stderr.contains("geomon: error: cannot read GeoJSON file '/nonexistent/fences.geojson': No such file or directory"), "\(missing.stderr)")
        let polar = try TemporaryDirectory()
        defer { polar.remove() }
        let path = try polar.write("polar.geojson", "{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"id\":\"pole\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[[0,86],[10,86],[10,88],[0,86]]]}}]}")
        let limits = try runGeomon(["query", "--fences", path, "1", "2"])
        #expect(limits.exitCode == 65)
        #expect(limits.stderr.contains("'pole'"))
        #expect(limits.stderr.contains("poles are not supported"))
    }
}
