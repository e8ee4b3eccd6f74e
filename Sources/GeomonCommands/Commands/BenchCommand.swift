import GeomonCore
import GeomonFormat
#if canImport(Glibc)
import Glibc
#endif

/// `geomon bench fences|generate|publish|hooks|tracks|activity`: benchmarks the fence index, the publisher, hooks, the
/// track reader and the activity classifier, and generates test data.
enum BenchCommand {
    static let group = CommandGroup(
        name: "bench",
        abstract: "Benchmarks the fence index, the MQTT publisher, hooks, the track reader and the activity classifier, and generates test data",
        discussion: "",
        subcommands: [BenchFencesCommand.self, BenchGenerateCommand.self, BenchPublishCommand.self, BenchHooksCommand.self, BenchTracksCommand.self,
                      BenchActivityCommand.self]
    )
}

/// `geomon bench fences`.
struct BenchFencesCommand: GeomonCommand {
    static let spec = CommandSpec(
        "bench fences",
        abstract: "Measures the fence index: build, point queries, a track",
        discussion: """
        Loads the fences, builds the index and, for every point (`lat,lon` lines), finds the
        containing fences and the nearest boundary (unbounded search). With --track, also
        follows the track (consecutive fixes close together) with a clearance cursor. Prints one
        JSON line: fences, points, load_s (the file streamed into the index), load_mb_per_s,
        load_peak_rss_mb (the peak resident set right after the load), load_rss_budget_mb (the
        index's bytes + 64 MB + a quarter of the file), load_rss_growth_mb (what the load added
        to the resident set), parse_mb_per_s (reading the file again without building anything:
        the reader's own speed), build_s (building the same index from shapes in memory),
        query_points_per_s (all points as one batch
        query, answered in spatial order, sorting included), query_points_per_s_single (one
        query per point in file order), track_fixes_per_s, track_queries, mean_inside,
        index_bytes, bytes_per_fence, peak_rss_mb, checksum (sum of the nearest distances),
        heap_huge_pages (whether geomon put its heap on huge pages for a large fence set; see
        GEOMON_HUGE_PAGES in docs/running.md). Rates are per CPU second. --synthetic N generates
        N fences, 100,000 points and the track in memory (the `generate` recipe) instead of
        reading files. --serve (for scripts/bench-fences.sh --interleave): after the build,
        prints one JSON line (fences, points, load_s, build_s, index_bytes, bytes_per_fence,
        heap_huge_pages), then for every line read from stdin answers all points once as one
        batch query and prints {"query_points_per_s": …, "checksum": …}, until EOF; a line
        `build` instead builds the index again and prints {"build_s": …, "index_bytes": …}.
        """,
        options: [
            .option("--fences", "FILE", "the fences (GeoJSON)", completion: .file(["geojson", "json"])),
            .option("--points", "FILE", "the points (`lat,lon` lines)", completion: .file(["csv"])),
            .option("--id-property", "NAME", "the feature property that holds each fence's id (as the profile's `id_property`)"),
            .option("--track", "FILE", "a track to follow (`lat,lon` lines)", completion: .file(["csv"])),
            .option("--synthetic", "N", "generate N fences in memory instead of reading files"),
            .option("--seed", "S", "with --synthetic: the generator's seed (default 1)"),
            .option("--track-fixes", "K", "with --synthetic: fixes of the generated track (default 1000000)"),
            .option("--repeat", "N", "measure N times and keep the best (default 1)"),
            .flag("--serve", "answer one batch query per line of stdin (see above)"),
        ],
        alternativeUsage: ["bench fences --synthetic N [--seed S] [--track-fixes K] [--repeat N]"]
    )

    var fences: String?
    var points: String?
    var idProperty: String?
    var track: String?
    var synthetic: Int?
    var seed: UInt64
    var trackFixes: Int
    var repeats: Int
    var serve: Bool

    init(_ arguments: ParsedArguments) throws {
        fences = arguments.value("--fences")
        points = arguments.value("--points")
        idProperty = arguments.value("--id-property")
        track = arguments.value("--track")
        synthetic = try arguments.int("--synthetic", in: 1...10_000_000)
        seed = UInt64(try arguments.int("--seed", in: 0...Int.max) ?? 1)
        if arguments.has("--seed") || arguments.has("--track-fixes"), !arguments.has("--synthetic") {
            throw UsageError("options '--seed' and '--track-fixes' belong to --synthetic")
        }
        trackFixes = try arguments.int("--track-fixes", in: 0...100_000_000) ?? 1_000_000
        repeats = try arguments.int("--repeat", in: 1...1000) ?? 1
        serve = arguments.flag("--serve")
    }

    func validate() throws {
        if synthetic != nil {
            guard fences == nil, points == nil, track == nil, idProperty == nil else {
                throw UsageError("--synthetic N replaces --fences, --points, --id-property and --track")
            }
        } else if fences == nil || points == nil {
            throw UsageError("bench fences needs --fences F.geojson and --points P.csv (or --synthetic N)")
        }
    }

    func run() throws -> Int32 {
        if let synthetic {
            var generator = BenchGenerator(seed: seed)
            let t0 = Bench.seconds()
            let data = generator.synthetic(fences: synthetic, points: 100_000, trackFixes: trackFixes)
            let t1 = Bench.seconds()
            let shapes = data.fences.compactMap(\.shape)
            if serve { return Bench.serve(shapes: shapes, points: data.points, load: Bench.Load(seconds: t1 - t0)) }
            return Bench.measure(shapes: shapes, index: nil, points: data.points, track: data.track, load: Bench.Load(seconds: t1 - t0), repeats: repeats)
        }
        return try Bench.benchFences(fencesPath: fences ?? "", pointsPath: points ?? "", idProperty: idProperty, trackPath: track, repeats: repeats, serve: serve)
    }
}

/// `geomon bench generate`.
struct BenchGenerateCommand: GeomonCommand {
    static let spec = CommandSpec(
        "bench generate",
        abstract: "Writes generated fences, points and a track for benchmarks",
        discussion: """
        Writes DIR/fences.geojson (circles as 64-gons with radii 50 m–2 km and irregular
        polygons, some with holes, at constant density in a square of side 50 km × sqrt(N/1000)),
        DIR/points.csv (uniformly random points) and DIR/track.csv (a smooth random walk with
        10 m steps), deterministically from the seed.
        """,
        options: [
            .option("--fences", "N", "how many fences"),
            .option("--points", "M", "how many points"),
            .option("--track-fixes", "K", "fixes of the track (default 1000000)"),
            .option("--seed", "S", "the generator's seed"),
            .option("--out", "DIR", "where to write", completion: .directory),
        ],
        required: ["--fences", "--points", "--seed", "--out"]
    )

    var fences: Int
    var points: Int
    var trackFixes: Int
    var seed: UInt64
    var out: String

    init(_ arguments: ParsedArguments) throws {
        fences = try arguments.int("--fences", in: 1...10_000_000) ?? 0
        points = try arguments.int("--points", in: 0...100_000_000) ?? 0
        trackFixes = try arguments.int("--track-fixes", in: 0...100_000_000) ?? 1_000_000
        seed = UInt64(try arguments.int("--seed", in: 0...Int.max) ?? 0)
        out = try arguments.required("--out")
        _ = try arguments.required("--fences")
        _ = try arguments.required("--points")
        _ = try arguments.required("--seed")
    }

    func run() throws -> Int32 {
        var generator = BenchGenerator(seed: seed)
        return generator.write(fences: fences, points: points, trackFixes: trackFixes, to: out)
    }
}

/// The benchmark's measurements.
enum Bench {
    /// How the fences were loaded: CPU seconds, and for a file its size and the peak RSS
    /// right after it was streamed into the index.
    struct Load {
        var seconds: Double
        var fileBytes = 0
        var peakRSSMegabytes: Double?
        /// The process's resident size before loading (what the load adds is measured from it).
        var baseRSSMegabytes: Double?
        /// CPU seconds of reading the file again without building anything.
        var parseSeconds: Double?
    }

    static func benchFences(fencesPath: String, pointsPath: String, idProperty: String?, trackPath: String?, repeats: Int, serve: Bool) throws -> Int32 {
        let base = currentRSSMegabytes()
        let t0 = seconds()
        let loaded: FenceLoading.Loaded
        do { loaded = try FenceLoading.geoJSONFences(path: fencesPath, idProperty: idProperty) } catch {
            for message in error.messages { writeStderr(message.contains(": error: ") ? message : "geomon: error: \(message)") }
            return error.exitCode
        }
        let t1 = seconds()
        var load = Load(seconds: t1 - t0, fileBytes: loaded.fileBytes, peakRSSMegabytes: peakRSSMegabytes(), baseRSSMegabytes: base)
        // The reader alone (parsing and checking, no index), after the load was measured.
        let p0 = seconds()
        _ = FenceLoading.parseOnly(path: fencesPath)
        load.parseSeconds = seconds() - p0
        guard let points = readPoints(pointsPath) else { return ExitCode.noInput.code }
        var track: [Coordinate] = []
        if let trackPath {
            guard let t = readPoints(trackPath) else { return ExitCode.noInput.code }
            track = t
        }
        // The in-memory build (`build_s`) indexes the shapes the streamed index holds.
        let shapes = (0..<loaded.index.count).map(loaded.index.shape(of:))
        if serve { return self.serve(shapes: shapes, points: points, load: load) }
        return measure(shapes: shapes, index: loaded.index, points: points, track: track, load: load, repeats: repeats)
    }

    /// `--serve`: builds the index, prints the build line, then answers all points as one batch
    /// query per line of stdin and prints the rate (CPU seconds), until EOF; a line `build`
    /// builds the index again instead (the first stays resident) and prints its time.
    static func serve(shapes: [FenceShape], points: [Coordinate], load: Load) -> Int32 {
        func build() -> (index: FenceIndex, seconds: Double) {
            let start = seconds()
            let index = FenceIndex(shapes: shapes)
            return (index, seconds() - start)
        }
        let (index, buildSeconds) = build()
        var first = JSONObject()
        first.add("fences", shapes.count)
        first.add("points", points.count)
        first.add("load_s", load.seconds, decimals: 3)
        first.add("build_s", buildSeconds, decimals: 3)
        first.add("index_bytes", index.indexBytes)
        first.add("bytes_per_fence", shapes.isEmpty ? 0 : index.indexBytes / shapes.count)
        first.add("heap_huge_pages", HeapPages.active)
        print(first.text)
        fflush(nil)
        while let line = readLine() {
            if line == "build" {
                let again = build()
                var o = JSONObject()
                o.add("build_s", again.seconds, decimals: 3)
                o.add("index_bytes", again.index.indexBytes)
                print(o.text)
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
            var o = JSONObject()
            o.add("query_points_per_s", rate)
            o.add("checksum", checksum, decimals: 1)
            print(o.text)
            fflush(nil)
        }
        return 0
    }

    /// Builds the index and runs the point and track queries; prints the JSON line.
    /// `index`: the one streamed from the file (queried); nil: the one built here is queried.
    static func measure(shapes: [FenceShape], index streamed: FenceIndex?, points: [Coordinate], track: [Coordinate], load: Load, repeats: Int) -> Int32 {
        let t1 = seconds()
        let built = FenceIndex(shapes: shapes)
        let t2 = seconds()
        let index = streamed ?? built

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
        var o = JSONObject()
        o.add("fences", shapes.count)
        o.add("points", points.count)
        o.add("load_s", load.seconds, decimals: 3)
        if let peak = load.peakRSSMegabytes {
            o.add("load_mb_per_s", Double(load.fileBytes) / 1e6 / max(load.seconds, 1e-9), decimals: 1)
            o.add("load_peak_rss_mb", peak, decimals: 1)
            o.add("load_rss_budget_mb", (Double(index.indexBytes) + 64e6 + 0.25 * Double(load.fileBytes)) / 1e6, decimals: 1)
            if let base = load.baseRSSMegabytes { o.add("load_rss_growth_mb", peak - base, decimals: 1) }
            if let parse = load.parseSeconds { o.add("parse_mb_per_s", Double(load.fileBytes) / 1e6 / max(parse, 1e-9), decimals: 1) }
        }
        o.add("build_s", t2 - t1, decimals: 3)
        o.add("query_points_per_s", Int(perSecond))
        o.add("query_points_per_s_single", Int(singlePerSecond))
        o.add("track_fixes", track.count)
        o.add("track_fixes_per_s", Int(trackPerSecond))
        o.add("track_queries", trackQueries)
        o.add("mean_inside", points.isEmpty ? 0 : Double(insideTotal) / Double(points.count), decimals: 3)
        o.add("index_bytes", index.indexBytes)
        o.add("bytes_per_fence", shapes.isEmpty ? 0 : index.indexBytes / shapes.count)
        o.add("peak_rss_mb", peakRSSMegabytes(), decimals: 1)
        // The track's sink keeps its loop from being optimised away.
        o.add("checksum", checksum + (trackSink < 0 ? 1 : 0), decimals: 1)
        o.add("heap_huge_pages", HeapPages.active)
        print(o.text)
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

    /// The resident set now (`/proc/self/statm`), in MB; nil where it cannot be read.
    static func currentRSSMegabytes() -> Double? {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        let fields = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: " ")
        guard fields.count >= 2, let resident = Double(fields[1]) else { return nil }
        return resident * Double(sysconf(Int32(_SC_PAGESIZE))) / 1e6
    }

    /// The peak resident set of this program image (`VmHWM` in `/proc/self/status`), in MB.
    /// Not `getrusage`'s `ru_maxrss`: Linux carries that across `execve` from the image
    /// before it, which for a program started by `posix_spawn` is the parent's peak.
    static func peakRSSMegabytes() -> Double {
        let fd = open("/proc/self/status", O_RDONLY)
        if fd >= 0 {
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 8192)
            let n = read(fd, &buffer, buffer.count)
            if n > 0, let line = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) }) {
                return kilobytes * 1024 / 1e6
            }
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) * 1024 / 1e6
    }

}
