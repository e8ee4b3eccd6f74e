import GeomonCore
import GeomonFormat
#if canImport(Glibc)
import Glibc
#endif

/// Deterministic benchmark data: fences, points and a track (see `geomon bench --help`).
struct BenchGenerator {
    /// SplitMix64.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// Uniform in [0, 1).
        mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
        mutating func range(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * unit() }
    }

    var random: Random
    let origin = Coordinate(latitude: 47.0, longitude: 8.0)

    init(seed: UInt64) { random = Random(state: seed) }

    /// Writes the files; returns the exit code.
    mutating func write(fences n: Int, points m: Int, trackFixes: Int, to directory: String) -> Int32 {
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            writeStderr("geomon: error: cannot create directory '\(directory)'")
            return ExitCode.failure.code
        }
        let side = 50_000 * (Double(n) / 1000).squareRoot()
        guard let fences = Output(path: directory + "/fences.geojson"),
              let points = Output(path: directory + "/points.csv"),
              let track = Output(path: directory + "/track.csv") else {
            writeStderr("geomon: error: cannot write into '\(directory)'")
            return ExitCode.failure.code
        }
        fences.write("{\"type\":\"FeatureCollection\",\"features\":[\n")
        for i in 0..<n {
            let rings = nextFence(side: side)
            let geometry = GeoJSONText.polygons([PolygonRings(shell: rings[0], holes: Array(rings.dropFirst()))], decimals: 6)
            fences.write((i == 0 ? "" : ",\n") + GeoJSONText.feature(id: "f\(i)", properties: JSONObject(), geometry: geometry))
        }
        fences.write("\n]}\n")
        for _ in 0..<m {
            let p = place(random.unit() * side - side / 2, random.unit() * side - side / 2)
            points.write("\(NumberText.fixed(p.latitude, 6)),\(NumberText.fixed(p.longitude, 6))\n")
        }
        for p in walk(fixes: trackFixes, side: side) {
            track.write("\(NumberText.fixed(p.latitude, 7)),\(NumberText.fixed(p.longitude, 7))\n")
        }
        guard fences.close(), points.close(), track.close() else {
            writeStderr("geomon: error: writing into '\(directory)' failed")
            return ExitCode.failure.code
        }
        return 0
    }

    /// A smooth random walk from the centre, 10 m steps, turning back at the square's edge.
    mutating func walk(fixes: Int, side: Double) -> [Coordinate] {
        var track: [Coordinate] = []
        track.reserveCapacity(fixes)
        var x = 0.0, y = 0.0, heading = random.range(0, 360), turn = 0.0
        for _ in 0..<fixes {
            turn = max(-4, min(4, turn + random.range(-1, 1)))
            heading += turn
            let t = heading * Double.pi / 180
            x += 10 * sin(t)
            y += 10 * cos(t)
            if abs(x) > side / 2 || abs(y) > side / 2 {
                heading += 180
                x = max(-side / 2, min(side / 2, x))
                y = max(-side / 2, min(side / 2, y))
            }
            track.append(place(x, y))
        }
        return track
    }

    /// The next fence's rings (shell first, counterclockwise; holes clockwise, as RFC 7946
    /// asks), in a square of side `side` metres.
    mutating func nextFence(side: Double) -> [[Coordinate]] {
        let center = place(random.unit() * side - side / 2, random.unit() * side - side / 2)
        if random.unit() < 0.7 {
            let radius = 50 + 1950 * pow(random.unit(), 3)
            return [(0..<64).map { Geodesy.localDestination(from: center, bearingDegrees: Double($0) * 360 / 64, distanceMeters: radius) }.reversed()]
        }
        let radius = 100 + 1900 * pow(random.unit(), 3)
        let vertices = 12 + Int(random.unit() * 117)
        // Bearings turn clockwise: the shell reversed, the hole as drawn.
        var rings = [Array(blob(center, radius: radius, vertices: vertices).reversed())]
        if random.unit() < 0.5 {
            // The shell's lobes can dip close to the centre; keep the hole well inside the
            // nearest shell vertex so it is always inside the outer ring (validation checks it).
            let nearest = rings[0].map { Geodesy.localDistanceMeters(from: center, to: $0) }.min() ?? radius
            let holeRadius = min(radius * 0.25, nearest * 0.45)
            rings.append(blob(center, radius: holeRadius, vertices: 8 + Int(random.unit() * 9)))
        }
        return rings
    }

    /// Fences, random points and a track in memory (the same recipe as the files, without
    /// the 6-decimal rounding), for benchmarks that skip GeoJSON parsing.
    mutating func synthetic(fences n: Int, points m: Int, trackFixes: Int) -> (fences: [Fence], points: [Coordinate], track: [Coordinate]) {
        let side = 50_000 * (Double(n) / 1000).squareRoot()
        var fences: [Fence] = []
        fences.reserveCapacity(n)
        for i in 0..<n {
            let rings = nextFence(side: side)
            fences.append(Fence(id: "f\(i)", shape: .polygons([PolygonRings(shell: rings[0], holes: Array(rings.dropFirst()))])))
        }
        let points = (0..<m).map { _ in place(random.unit() * side - side / 2, random.unit() * side - side / 2) }
        return (fences, points, walk(fixes: trackFixes, side: side))
    }

    /// The point `east`, `north` metres from the origin (flat mapping, exact enough here).
    func place(_ east: Double, _ north: Double) -> Coordinate {
        let k0 = Geodesy.metersPerDegree(atLatitude: origin.latitude)
        let lat = origin.latitude + north / k0.latitude
        let k = Geodesy.metersPerDegree(atLatitude: lat)
        return Coordinate(latitude: lat, longitude: origin.longitude + east / k.longitude)
    }

    /// An irregular, smooth, star-shaped outline (a few random harmonics of the radius).
    mutating func blob(_ center: Coordinate, radius: Double, vertices n: Int) -> [Coordinate] {
        let a1 = random.range(0, 0.25), a2 = random.range(0, 0.15), a3 = random.range(0, 0.08)
        let p1 = random.range(0, 6.3), p2 = random.range(0, 6.3), p3 = random.range(0, 6.3)
        return (0..<n).map { i in
            let t = 2 * Double.pi * Double(i) / Double(n)
            let f = 1 - a1 - a2 - a3 + a1 * cos(2 * t + p1) + a2 * cos(3 * t + p2) + a3 * cos(7 * t + p3)
            let jitter = 1 + random.range(-0.02, 0.02)
            return Geodesy.localDestination(from: center, bearingDegrees: t * 180 / Double.pi, distanceMeters: radius * f * jitter)
        }
    }

}

/// A buffered output file.
final class Output {
    private let file: UnsafeMutablePointer<FILE>
    private var failed = false

    init?(path: String) {
        guard let f = fopen(path, "w") else { return nil }
        file = f
    }

    func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            if fwrite(bytes.baseAddress, 1, bytes.count, file) != bytes.count { failed = true }
        }
    }

    func close() -> Bool {
        let ok = fclose(file) == 0
        return ok && !failed
    }
}
