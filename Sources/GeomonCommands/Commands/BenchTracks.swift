import FoundationEssentials
import GeomonCore
import GeomonFormat
import GeomonSources
import GeomonSystem
#if canImport(Glibc)
import Glibc
#endif

/// `geomon bench tracks`: how fast a GPX file is read (`GPXParser`'s byte scanner), from bytes
/// in memory.
struct BenchTracksCommand: GeomonCommand {
    static let spec = CommandSpec(
        "bench tracks",
        abstract: "Measures reading a GPX file: MB/s of the track reader",
        discussion: """
        Reads FILE into memory once, then parses it `--repeat` times and prints one JSON line:
        the file's size, the fixes found and the median MB/s.
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
        var times: [Double] = []
        var fixes = 0
        bytes.withUnsafeBufferPointer { buffer in
            for _ in 0..<repeats {
                let start = Monotonic.microseconds()
                fixes = GPXParser.parse(buffer).fixes.count
                times.append(Double(Monotonic.microseconds() - start))
            }
        }
        var o = JSONObject()
        o.add("bytes", bytes.count)
        o.add("fixes", fixes)
        o.add("mb_s", Double(bytes.count) / max(1, times.sorted()[times.count / 2]), decimals: 1)
        print(o.text)
        return 0
    }
}
