import Foundation
import GeomonCore
import GeomonSources
import GeomonTestSupport
import Testing

/// `TrackStream` hands out the same fixes, skipped counts and format as reading the whole file,
/// whatever the chunk size, for every format.
struct TrackStreamTests {
    static let tracks = [
        "tracks/genivi_20100403_Z205_Switzerland_short.nmea",
        "tracks/georust_garmin_with_extensions.gpx",
        "tracks/bu353s4.log.chk-gpsd3.22",
        "replay/swiss-drive.jsonl",
        "replay/telit-static.jsonl",
    ]

    @Test(arguments: tracks) func streamingEqualsReadingTheWholeFile(name: String) throws {
        let path = TestSupport.fixture(name).path
        let whole = try TrackReader.read(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))), name: path)
        for chunk in [4096, 65_537, TrackStream.defaultChunkSize] {
            let fixes = Array(try TrackStream(path: path, chunkSize: chunk))
            var counted = try TrackStream(path: path, chunkSize: chunk)
            while counted.next() != nil {}
            #expect(fixes == whole.fixes, "chunk \(chunk)")
            #expect(counted.skipped == whole.skipped, "chunk \(chunk)")
            #expect(counted.readError == nil)
            #expect(counted.format.rawValue == whole.format)
        }
        #expect(!whole.fixes.isEmpty)
    }

    @Test func aLineSplitAcrossChunksAndCRLFEndingsRead() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // Long lines, CR LF, a bad line: with a 4 KiB chunk every few lines straddle a boundary.
        var text = ""
        for k in 0..<400 {
            let time = UTCTime(millisecondsSince1970: 1_700_000_000_000 + Int64(k) * 1000).rfc3339
            text += "{\"time\":\"\(time)\",\"lat\":47.\(1000 + k),\"lon\":8.5,\"accuracy_m\":5,\"note\":\"\(String(repeating: "x", count: k % 50))\"}\r\n"
            if k == 200 { text += "{\"time\":\"not a time\",\"lat\":1,\"lon\":2}\r\n" }
        }
        let path = dir.url.appendingPathComponent("crlf.jsonl").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        var stream = try TrackStream(path: path, chunkSize: 4096)
        var fixes: [Fix] = []
        while let fix = stream.next() { fixes.append(fix) }
        #expect(fixes.count == 400)
        #expect(fixes.map(\.coordinate.latitude) == (0..<400).map { Double("47.\(1000 + $0)")! })
        #expect(stream.skipped == ["bad time": 1])
    }

    @Test func missingEmptyDirectoryAndUnknownAreClearErrors() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let empty = dir.url.appendingPathComponent("empty.nmea").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let prose = dir.url.appendingPathComponent("prose.txt").path
        try "just some words\n".write(toFile: prose, atomically: true, encoding: .utf8)
        let cases: [(String, String, Bool)] = [
            (dir.url.appendingPathComponent("nope.nmea").path, "no such file", true),
            (dir.url.path, "is a directory", true),
            (empty, "empty file", false),
            (prose, "not a track", false),
        ]
        for (path, message, missing) in cases {
            do {
                _ = try TrackStream(path: path)
                Issue.record("\(path) opened")
            } catch {
                #expect(error.message.contains(message), "\(error)")
                #expect(error.isMissing == missing)
            }
        }
    }
}

/// The flat JSON reader behind JSON lines, gpsd JSON and the plugin protocols.
struct FlatJSONNumberTests {
    @Test func numbersParseExactlyAndBadOnesAreRejected() throws {
        var parser = JSONLinesParser()
        let lines = [
            #"{"time":"2024-01-01T00:00:00Z","lat":4.7e1,"lon":-0.000001,"accuracy_m":12.5,"speed_mps":0}"#,
            #"{"time":"2024-01-01T00:00:01Z","lat":47.1,"lon":8,"lat":47.2,"accuracy_m":1E-1}"#,
            #"{"time":"2024-01-01T00:00:02Z","lat":1.2.3,"lon":8}"#,
            #"{"time":"2024-01-01T00:00:03Z","lat":47,"lon":8"#,
            #"{"time":"2024\u002d01-01T00:00:04Z","lat":-47.25,"lon":8.125}"#,
        ]
        let fixes = parser.feed(Array(lines.joined(separator: "\n").utf8)) + parser.finish()
        #expect(fixes.map(\.coordinate.latitude) == [47, 47.2, -47.25])
        #expect(fixes.map(\.coordinate.longitude) == [-0.000001, 8, 8.125])
        #expect(fixes.map(\.horizontalAccuracyMeters) == [12.5, 0.1, AccuracyModel.unknownAccuracyMeters])
        #expect(fixes[2].time.rfc3339 == "2024-01-01T00:00:04Z")
        #expect(parser.skipped == ["malformed": 2])
    }

    /// Decimals of every length read exactly as `Double(String)` reads them (the fast path for
    /// up to 15 digits and the general one beyond).
    @Test func decimalsOfEveryLengthReadAsDoubleReadsThem() {
        var generator = GeomonCore.SplitMix64(seed: 42)
        var texts: [String] = []
        for _ in 0..<20_000 {
            let intDigits = Int(generator.next() % 4)
            let fractionDigits = Int(generator.next() % 19)
            var text = generator.next() % 2 == 0 ? "-" : ""
            text += intDigits == 0 ? "0" : String(generator.next() % UInt64(pow(10, Double(intDigits))))
            if fractionDigits > 0 {
                text += "." + (0..<fractionDigits).map { _ in String(generator.next() % 10) }.joined()
            }
            texts.append(text)
        }
        texts += ["0.1", "0.3", "47.376887", "8.541694", "179.9999999", "-0.000000000000000000001", "123456789012345.6", "1.7976931348623157"]
        var parser = JSONLinesParser()
        let lines = texts.map { #"{"time":"2024-01-01T00:00:00Z","lat":0,"lon":0,"accuracy_m":\#($0)}"# }
        let fixes = parser.feed(Array(lines.joined(separator: "\n").utf8)) + parser.finish()
        let expected = texts.map { abs(Double($0)!) }
        // accuracy_m must be ≥ 0: the negative ones are rejected, the rest read exactly.
        let kept = zip(texts, expected).filter { !$0.0.hasPrefix("-") || Double($0.0)! == 0 }.map(\.1)
        #expect(fixes.map(\.horizontalAccuracyMeters) == kept)
    }
}
