import GeomonCore
import GeomonFormat
#if canImport(Glibc)
import Glibc
#endif

/// `geomon query`: Reports which fences contain points and the nearest boundary.
struct QueryCommand: GeomonCommand {
    static let spec = CommandSpec(
        "query",
        abstract: "Reports which fences contain points and the nearest boundary",
        discussion: """
        With LAT LON, answers for that point; otherwise reads points from standard input, one per
        line as `lat lon` or `lat,lon` (blank lines and lines starting with # are skipped), and
        prints one JSON object per point:

          {"lat":47.37,"lon":8.54,"inside":["depot"],"nearest":{"fence":"depot","distance_m":-12.3}}

        `inside` lists the ids of the fences containing the point (a point on a boundary is
        inside), sorted; `nearest` is the fence with the nearest boundary and the signed distance
        to it in metres (negative inside), or null when there are no fences. Bad input lines are
        reported on standard error with their line number and skipped; the exit code is then 65.
        Each point is answered as soon as it has been read (a file is answered in batches, a line
        typed or piped from a live feed at once), so geomon query can follow a feed.
        """,
        options: [
            .option("--profile", "PROFILE", "the profile whose fences to use", completion: .file(["yaml", "yml"])),
            .option("--fences", "FILE", "a GeoJSON FeatureCollection of fences instead", completion: .file(["geojson", "json"])),
            .option("--id-property", "NAME", "with --fences: take fence ids from this feature property"),
            insecureProfileOption,
        ],
        arguments: [ArgumentSpec("LAT", "latitude of one point", arity: .optional), ArgumentSpec("LON", "its longitude", arity: .optional)]
    )

    var profile: String?
    var fencesPath: String?
    var idProperty: String?
    var single: Coordinate?
    var insecurePermissions: Bool

    init(_ arguments: ParsedArguments) throws {
        profile = arguments.value("--profile")
        fencesPath = arguments.value("--fences")
        idProperty = arguments.value("--id-property")
        insecurePermissions = arguments.flag("--insecure-permissions")
        let rest = arguments.positionals
        switch rest.count {
        case 0: break
        case 2:
            guard let p = Self.parsePoint(rest[0] + " " + rest[1]) else {
                throw UsageError("LAT LON must be numbers with latitude in -90...90 and longitude in -180...180 (got '\(rest[0]) \(rest[1])')")
            }
            single = p
        default:
            throw UsageError("expected LAT LON or no positional arguments (got \(rest.count))")
        }
    }

    func validate() throws {
        guard (profile == nil) != (fencesPath == nil) else {
            throw UsageError("give exactly one of --profile P or --fences FILE.geojson")
        }
        if idProperty != nil && fencesPath == nil { throw UsageError("--id-property needs --fences") }
    }

    func run() throws -> Int32 {
        let loaded: FenceLoading.Loaded
        do {
            if let profile { loaded = try FenceLoading.profileFences(path: profile, insecurePermissions: insecurePermissions) }
            else { loaded = try FenceLoading.geoJSONFences(path: fencesPath ?? "", idProperty: idProperty) }
        } catch let error as FenceLoading.Failure {
            for message in error.messages {
                writeStderr(message.contains(": error: ") ? message : "geomon: error: \(message)")
            }
            return error.exitCode
        }
        let index = loaded.index
        let ids = loaded.fences.map(\.id)
        var result = FenceQueryResult()

        if let single {
            index.query(single, within: .infinity, into: &result)
            print(Self.format(single, result, ids: ids))
            return 0
        }
        // Points are answered in batches with the index's batch query (spatial order,
        // prefetched): a batch is whatever one read of standard input delivered, so a file
        // or a fast pipe is answered thousands of points at a time, while a line typed at a
        // terminal or written by a slow producer is answered as soon as it arrives.
        var pending: [Coordinate] = []
        var bad = 0
        var lineNumber = 0
        var output = ""
        func answer() {
            guard !pending.isEmpty else { return }
            let results = index.query(points: pending, within: .infinity)
            for (p, result) in zip(pending, results) {
                output += Self.format(p, result, ids: ids)
                output += "\n"
            }
            pending.removeAll(keepingCapacity: true)
            Self.flush(&output)
        }
        func handle(_ bytes: ArraySlice<UInt8>) {
            lineNumber += 1
            let line = String(decoding: bytes, as: UTF8.self)
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { return }
            guard let p = Self.parsePoint(trimmed) else {
                bad += 1
                answer()
                writeStderr("geomon: error: <stdin>:\(lineNumber): expected 'lat lon' or 'lat,lon' with latitude in -90...90 and longitude in -180...180 (got '\(String(trimmed.prefix(80)))')")
                return
            }
            pending.append(p)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var carry: [UInt8] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                answer()
                writeStderr("geomon: error: <stdin>: cannot read: \(String(cString: strerror(errno)))")
                return ExitCode.failure.code
            }
            if count == 0 { break }
            var start = 0
            for i in 0..<count where buffer[i] == UInt8(ascii: "\n") {
                if carry.isEmpty {
                    handle(buffer[start..<i])
                } else {
                    carry += buffer[start..<i]
                    handle(carry[...])
                    carry.removeAll(keepingCapacity: true)
                }
                start = i + 1
            }
            carry += buffer[start..<count]
            answer()
        }
        if !carry.isEmpty { handle(carry[...]) }
        answer()
        return bad > 0 ? ExitCode.dataError.code : 0
    }

    private static func flush(_ output: inout String) {
        if !output.isEmpty {
            print(output, terminator: "")
            fflush(nil) // every output stream: a reader on a pipe gets each batch as it is answered
            output = ""
        }
    }

    /// `lat lon` or `lat,lon` (spaces or one comma between), decimal numbers (not hex, `inf`
    /// or `nan`, which `Double` would read), range-checked.
    static func parsePoint(_ text: Substring) -> Coordinate? {
        let parts = text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
        func decimal(_ s: Substring) -> Double? {
            guard s.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }) else { return nil }
            return Double(s)
        }
        guard parts.count == 2, text.filter({ $0 == "," }).count <= 1,
              let lat = decimal(parts[0]), let lon = decimal(parts[1]) else { return nil }
        let p = Coordinate(latitude: lat, longitude: lon)
        return p.isValid ? p : nil
    }

    static func parsePoint(_ text: String) -> Coordinate? { parsePoint(text[...]) }

    /// One output line (no newline).
    static func format(_ p: Coordinate, _ result: FenceQueryResult, ids: [String]) -> String {
        let inside = result.containing.map { ids[$0] }.sorted()
        var line = "{\"lat\":\(number(p.latitude)),\"lon\":\(number(p.longitude)),\"inside\":["
        line += inside.map(jsonString).joined(separator: ",")
        line += "],\"nearest\":"
        if let nearest = result.nearest {
            let rounded = (nearest.signedDistanceMeters * 100).rounded() / 100
            line += "{\"fence\":\(jsonString(ids[nearest.fence])),\"distance_m\":\(number(rounded == 0 ? 0 : rounded))}"
        } else {
            line += "null"
        }
        return line + "}"
    }

    static func number(_ value: Double) -> String {
        JSON.number(value)
    }

    static func jsonString(_ text: String) -> String {
        JSON.string(text)
    }
}
