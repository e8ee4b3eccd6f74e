import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// `geomon bench`: Benchmarks the fence index and generates test data.
enum BenchCommand: Command {
    static let name = "bench"
    static let summary = "Benchmarks the fence index and generates test data"
    static let help = """
    usage: geomon bench fences --fences F.geojson --points P.csv [--track T.csv] [--repeat N] [--serve]
           geomon bench fences --synthetic N [--seed S] [--track-fixes K] [--repeat N]
           geomon bench generate --fences N --points M [--track-fixes K] --seed S --out DIR

    bench fences: loads the fences, builds the index and, for every point (`lat,lon` lines),
    finds the containing fences and the nearest boundary (unbounded search). With --track,
    also follows the track (consecutive fixes close together) with a clearance cursor.
    Prints one JSON line: fences, points, load_s, build_s, query_points_per_s (all points as
    one batch query, answered in spatial order, sorting included), query_points_per_s_single
    (one query per point in file order), track_fixes_per_s, track_queries, mean_inside,
    index_bytes, bytes_per_fence, peak_rss_mb, checksum (sum of the nearest distances),
    heap_huge_pages (whether geomon put its heap on huge pages for a large fence set; see
    GEOMON_HUGE_PAGES in docs/running.md). Rates are per CPU second. --synthetic N generates
    N fences, 100,000 points and the track in memory (the `generate` recipe) instead of
    reading files, to measure beyond what the GeoJSON loader can read. --serve (for
    scripts/bench-fences.sh --interleave): after the build, prints one JSON line (fences,
    points, load_s, build_s, index_bytes, bytes_per_fence, heap_huge_pages), then for every
    line read from stdin answers all points once as one batch query and prints
    {"query_points_per_s": …, "checksum": …}, until EOF: a driver can then time geomon and a
    peer alternately, seconds apart, on a machine whose speed drifts. A line `build` instead
    builds the index again and prints {"build_s": …, "index_bytes": …}.

    bench generate: writes DIR/fences.geojson (circles as 64-gons with radii 50 m–2 km and
    irregular polygons, some with holes, at constant density in a square of side
    50 km × sqrt(N/1000)), DIR/points.csv (uniformly random points) and DIR/track.csv (a
    smooth random walk with 10 m steps), deterministically from the seed.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let fencesOption = try arguments.option("--fences")
        let pointsOption = try arguments.option("--points")
        let track = try arguments.option("--track")
        let repeats = try arguments.intOption("--repeat", default: 1, range: 1...1000) ?? 1
        let trackFixes = try arguments.intOption("--track-fixes", default: 1_000_000, range: 0...100_000_000) ?? 0
        let seed = try arguments.option("--seed")
        let out = try arguments.option("--out")
        let synthetic = try arguments.intOption("--synthetic", range: 1...10_000_000)
        let serve = arguments.flag("--serve")
        let words = try arguments.positionals()
        guard words.count == 1 else { throw UsageError("expected 'fences' or 'generate'") }
        switch words[0] {
        case "fences":
            if let synthetic {
                guard fencesOption == nil, pointsOption == nil, track == nil, out == nil else {
                    throw UsageError("--synthetic N replaces --fences, --points and --track")
                }
                var seedValue: UInt64 = 1
                if let seed {
                    guard let v = UInt64(seed) else { throw UsageError("--seed needs an unsigned integer") }
                    seedValue = v
                }
                var generator = BenchGenerator(seed: seedValue)
                let t0 = seconds()
                let data = generator.synthetic(fences: synthetic, points: 100_000, trackFixes: trackFixes)
                let t1 = seconds()
                if serve { return self.serve(fences: data.fences, points: data.points, loadSeconds: t1 - t0) }
                return measure(fences: data.fences, points: data.points, track: data.track, loadSeconds: t1 - t0, repeats: repeats)
            }
            guard let fences = fencesOption, let points = pointsOption else {
                throw UsageError("bench fences needs --fences F.geojson and --points P.csv")
            }
            if seed != nil || out != nil { throw UsageError("--seed and --out belong to bench generate") }
            return try benchFences(fencesPath: fences, pointsPath: points, trackPath: track, repeats: repeats, serve: serve)
        case "generate":
            guard let n = fencesOption.flatMap({ Int($0) }), n >= 1, n <= 10_000_000,
                  let m = pointsOption.flatMap({ Int($0) }), m >= 0, m <= 100_000_000 else {
                throw UsageError("bench generate needs --fences N (1...10000000) and --points M (0...100000000)")
            }
            guard let seedText = seed, let seedValue = UInt64(seedText) else { throw UsageError("bench generate needs --seed S (an unsigned integer)") }
            guard let out else { throw UsageError("bench generate needs --out DIR") }
            if serve { throw UsageError("--serve belongs to bench fences") }
            var generator = BenchGenerator(seed: seedValue)
            return generator.write(fences: n, points: m, trackFixes: trackFixes, to: out)
        default:
            throw UsageError("unknown bench '\(words[0])': expected 'fences' or 'generate'")
        }
    }

    static func benchFences(fencesPath: String, pointsPath: String, trackPath: String?, repeats: Int, serve: Bool) throws -> Int32 {
        let t0 = seconds()
        let fences: [Fence]
        do { fences = try FenceLoading.geoJSONFences(path: fencesPath, idProperty: nil) } catch {
            for message in error.messages { writeStderr(message.contains(": error: ") ? message : "geomon: error: \(message)") }
            return error.exitCode
        }
        let t1 = seconds()
        guard let points = readPoints(pointsPath) else { return ExitCode.noInput.code }
        var track: [Coordinate] = []
        if let trackPath {
            guard let t = readPoints(trackPath) else { return ExitCode.noInput.code }
            track = t
        }
        if serve { return self.serve(fences: fences, points: points, loadSeconds: t1 - t0) }
        return measure(fences: fences, points: points, track: track, loadSeconds: t1 - t0, repeats: repeats)
    }

    /// `--serve`: builds the index, prints the build line, then answers all points as one batch
    /// query per line of stdin and prints the rate (CPU seconds), until EOF; a line `build`
    /// builds the index again instead (the first stays resident) and prints its time.
    static func serve(fences: [Fence], points: [Coordinate], loadSeconds: Double) -> Int32 {
        let shapes = fences.map(\.shape)
        func build() -> (index: FenceIndex, seconds: Double) {
            let start = seconds()
            let index = FenceIndex(shapes: shapes)
            return (index, seconds() - start)
        }
        let (index, buildSeconds) = build()
        print("{\"fences\":\(fences.count),\"points\":\(points.count),\"load_s\":\(fixed(loadSeconds, 3)),"
            + "\"build_s\":\(fixed(buildSeconds, 3)),\"index_bytes\":\(index.indexBytes),"
            + "\"bytes_per_fence\":\(fences.isEmpty ? 0 : index.indexBytes / fences.count),"
            + "\"heap_huge_pages\":\(HeapPages.active)}")
        fflush(nil)
        while let line = readLine() {
            if line == "build" {
                let again = build()
                print("{\"build_s\":\(fixed(again.seconds, 3)),\"index_bytes\":\(again.index.indexBytes)}")
                fflush(nil)
                continue
            }
            var checksum = 0.0
            let start = seconds()
            index.query(points: points, within: .infinity) { _, result in
                checksum += result.nearest?.signedDistanceMeters ?? 0
            }
            let elapsed = seconds() - start
            let rate = points.isEmpty || elapsed <= 0 ? 0 : Int(Double(points.count) / elapsed)
            print("{\"query_points_per_s\":\(rate),\"checksum\":\(fixed(checksum, 1))}")
            fflush(nil)
        }
        return 0
    }

    /// Builds the index and runs the point and track queries; prints the JSON line.
    static func measure(fences: [Fence], points: [Coordinate], track: [Coordinate], loadSeconds: Double, repeats: Int) -> Int32 {
        let shapes = fences.map(\.shape)
        let t1 = seconds()
        let index = FenceIndex(shapes: shapes)
        let t2 = seconds()

        // One at a time, in input order (what the monitor does per fix).
        var result = FenceQueryResult()
        var insideTotal = 0
        var trackSink = 0
        var checksum = 0.0
        var singleBest = Double.infinity
        var single = [Double](repeating: 0, count: points.count)
        for _ in 0..<repeats {
            insideTotal = 0
            let start = seconds()
            for (i, p) in points.enumerated() {
                index.query(p, within: .infinity, into: &result)
                insideTotal += result.containing.count
                single[i] = result.nearest?.signedDistanceMeters ?? 0
            }
            singleBest = min(singleBest, seconds() - start)
        }
        for d in single { checksum += d }
        // Batch: the same queries answered in spatial order (sorting included in the time).
        var best = Double.infinity
        var batch = [Double](repeating: 0, count: points.count)
        var batchInside = 0
        for _ in 0..<repeats {
            batchInside = 0
            let start = seconds()
            index.query(points: points, within: .infinity) { i, result in
                batchInside += result.containing.count
                batch[i] = result.nearest?.signedDistanceMeters ?? 0
            }
            best = min(best, seconds() - start)
        }
        if batch != single || batchInside != insideTotal {
            writeStderr("geomon: error: batch and single queries disagree")
            return ExitCode.failure.code
        }
        var trackBest = Double.infinity
        var trackQueries = 0
        for _ in 0..<(track.isEmpty ? 0 : repeats) {
            var cursor = FenceTrackCursor(searchRadiusMeters: 2000)
            let start = seconds()
            for p in track {
                cursor.move(to: p, in: index)
                trackSink &+= cursor.result.containing.count
            }
            trackBest = min(trackBest, seconds() - start)
            trackQueries = cursor.queries
        }
        let perSecond = points.isEmpty ? 0 : Double(points.count) / best
        let singlePerSecond = points.isEmpty ? 0 : Double(points.count) / singleBest
        let trackPerSecond = track.isEmpty ? 0 : Double(track.count) / trackBest
        var fields: [String] = []
        fields.append("\"fences\":\(fences.count)")
        fields.append("\"points\":\(points.count)")
        fields.append("\"load_s\":\(fixed(loadSeconds, 3))")
        fields.append("\"build_s\":\(fixed(t2 - t1, 3))")
        fields.append("\"query_points_per_s\":\(Int(perSecond))")
        fields.append("\"query_points_per_s_single\":\(Int(singlePerSecond))")
        fields.append("\"track_fixes\":\(track.count)")
        fields.append("\"track_fixes_per_s\":\(Int(trackPerSecond))")
        fields.append("\"track_queries\":\(trackQueries)")
        fields.append("\"mean_inside\":\(fixed(points.isEmpty ? 0 : Double(insideTotal) / Double(points.count), 3))")
        fields.append("\"index_bytes\":\(index.indexBytes)")
        fields.append("\"bytes_per_fence\":\(fences.isEmpty ? 0 : index.indexBytes / fences.count)")
        fields.append("\"peak_rss_mb\":\(fixed(peakRSSMegabytes(), 1))")
        fields.append("\"checksum\":\(fixed(checksum, 1) + (trackSink < 0 ? "1" : ""))")
        fields.append("\"heap_huge_pages\":\(HeapPages.active)")
        print("{" + fields.joined(separator: ",") + "}")
        return 0
    }

    /// `lat,lon` (or `lat lon`) lines; nil after printing an error.
    static func readPoints(_ path: String) -> [Coordinate]? {
        guard let file = fopen(path, "r") else {
            writeStderr("geomon: error: cannot read '\(path)'")
            return nil
        }
        defer { fclose(file) }
        var points: [Coordinate] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        var number = 0
        while getline(&line, &capacity, file) > 0 {
            number += 1
            guard let line else { break }
            let text = String(cString: line).trimmingWhitespace()
            if text.isEmpty || text.hasPrefix("#") { continue }
            guard let p = QueryCommand.parsePoint(text) else {
                writeStderr("geomon: error: \(path):\(number): expected 'lat,lon'")
                free(line)
                return nil
            }
            points.append(p)
        }
        free(line)
        return points
    }

    /// CPU seconds of this process (the machine is shared; CPU time is what the work costs).
    static func seconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }

    static func peakRSSMegabytes() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }

    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "null" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let r = (value * scale).rounded() / scale
        return "\(r)"
    }
}
