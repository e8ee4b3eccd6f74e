import FoundationEssentials
import GeomonCore
import GeomonFormat
import GeomonSources
import GeomonSystem
#if canImport(Glibc)
import Glibc
#endif

/// `geomon bench tracks`: how fast a GPX file is read, by the byte scanner geomon uses and by
/// libexpat, over the same bytes in memory.
struct BenchTracksCommand: GeomonCommand {
    static let spec = CommandSpec(
        "bench tracks",
        abstract: "Measures reading a GPX file: the byte scanner against libexpat, MB/s",
        discussion: """
        Reads FILE into memory once, then parses it `--repeat` times with each reader
        (alternating) and prints one JSON line: the file's size, the fixes each reader found
        (they must agree), and the median MB/s of each.
        """,
        options: [.option("--repeat", "N", "parses per reader (default 9)")],
        arguments: [ArgumentSpec("FILE", "a GPX file", completion: .file(["gpx"]))]
    )

    var path: String
    var repeats: Int

    init(_ arguments: ParsedArguments) throws {
        guard let first = arguments.positionals.first else { throw CommandFailure("bench tracks: FILE is required", exitCode: .usage) }
        path = first
        repeats = try arguments.int("--repeat", in: 1...1000) ?? 9
    }

    func run() throws -> Int32 {
        guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("bench tracks: cannot read \(path)", exitCode: .noInput) }
        let bytes = [UInt8](data)
        var scanner: [Double] = [], expat: [Double] = []
        var counts = (scanner: 0, expat: 0)
        bytes.withUnsafeBufferPointer { buffer in
            for _ in 0..<repeats {
                var start = Monotonic.microseconds()
                counts.scanner = GPXParser.parse(buffer).fixes.count
                scanner.append(Double(Monotonic.microseconds() - start))
                start = Monotonic.microseconds()
                counts.expat = GPXExpat.parse(buffer).fixes.count
                expat.append(Double(Monotonic.microseconds() - start))
            }
        }
        func rate(_ times: [Double]) -> Double { Double(bytes.count) / max(1, times.sorted()[times.count / 2]) }
        var o = JSONObject()
        o.add("bytes", bytes.count)
        o.add("fixes_scanner", counts.scanner)
        o.add("fixes_expat", counts.expat)
        o.add("scanner_mb_s", rate(scanner), decimals: 1)
        o.add("expat_mb_s", rate(expat), decimals: 1)
        print(o.text)
        return counts.scanner == counts.expat ? 0 : 1
    }
}
