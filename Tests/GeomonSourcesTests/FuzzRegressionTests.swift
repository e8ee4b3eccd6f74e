import Foundation
import GeomonCore
import GeomonSources
import GeomonTestSupport
import Testing

/// Inputs that once crashed a reader or broke an invariant under libFuzzer (scripts/fuzz.sh),
/// kept in Tests/Fixtures/fuzz-regressions/TARGET/. Each runs through the reader it crashed and
/// through `TrackReader`, whole and byte by byte, and must give only valid fixes.
struct FuzzRegressionTests {
    static let targets = ["nmea", "gpsd-json", "gpx", "track"]

    /// "target/file" for every regression input of the track readers.
    static let cases: [String] = targets.flatMap { target in
        let dir = TestSupport.fixture("fuzz-regressions/\(target)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.filter { !$0.hasSuffix(".md") }.sorted().map { "\(target)/\($0)" }
    }

    @Test func regressionInputsArePresent() {
        #expect(Self.cases.contains { $0.hasPrefix("gpx/") })
        #expect(Self.cases.contains { $0.hasPrefix("gpsd-json/") })
        #expect(Self.cases.contains { $0.hasPrefix("track/") })
    }

    @Test(arguments: cases)
    func regressionInputGivesOnlyValidFixes(_ name: String) throws {
        let bytes = [UInt8](try Data(contentsOf: TestSupport.fixture("fuzz-regressions/\(name)")))
        let target = String(name.prefix { $0 != "/" })
        var fixes: [Fix] = []
        switch target {
        case "nmea":
            var whole = NMEAParser()
            fixes = whole.feed(bytes) + whole.finish()
            var split = NMEAParser()
            var splitFixes: [Fix] = []
            for b in bytes { splitFixes += split.feed([b]) }
            splitFixes += split.finish()
            #expect(splitFixes == fixes)
        case "gpsd-json":
            var whole = GPSDJSONParser()
            fixes = whole.feed(bytes) + whole.finish()
            var split = GPSDJSONParser()
            var splitFixes: [Fix] = []
            for b in bytes { splitFixes += split.feed([b]) }
            splitFixes += split.finish()
            #expect(splitFixes == fixes)
            var lines = JSONLinesParser()
            fixes += lines.feed(bytes) + lines.finish()
        case "gpx":
            fixes = GPXParser.parse(bytes).fixes
        default:
            break
        }
        if let track = try? TrackReader.read(bytes: bytes, name: name) { fixes += track.fixes }
        for fix in fixes {
            #expect(fix.coordinate.isValid, "\(fix)")
            #expect(fix.horizontalAccuracyMeters.isFinite && fix.horizontalAccuracyMeters >= 0, "\(fix)")
            #expect(fix.speedMetersPerSecond?.isFinite ?? true, "\(fix)")
            #expect(fix.courseDegrees?.isFinite ?? true, "\(fix)")
        }
    }

    /// The first fuzz find: `<time/>`-style self-closing text elements inside a point.
    @Test func selfClosingTextElementsAreEmpty() {
        let gpx = Array(#"<gpx><trk><trkseg><trkpt lat="1" lon="2"><time/><hdop/></trkpt><trkpt lat="1" lon="2"><time>2024-05-01T12:00:00Z</time><hdop/></trkpt></trkseg></trk></gpx>"#.utf8)
        let (fixes, skipped) = GPXParser.parse(gpx)
        #expect(fixes.count == 1)
        #expect(fixes.first?.horizontalAccuracyMeters == AccuracyModel.unknownAccuracyMeters)
        #expect(skipped["bad time"] == 1)
    }

    /// GPX times are UTC: a time without a zone is read as UTC; a comment or a CDATA section
    /// inside `<time>` is markup, not part of the time.
    @Test func gpxTimesWithoutAZoneOrWithMarkupAreRead() {
        let gpx = Array("""
            <gpx><trk><trkseg>
            <trkpt lat="1" lon="2"><time>2024-05-01T12:00:00</time></trkpt>
            <trkpt lat="1" lon="2"><time><![CDATA[2024-05-01T12:00:01Z]]></time></trkpt>
            <trkpt lat="1" lon="2"><time>2024-05-01T12:00:02Z<!-- c --></time></trkpt>
            <trkpt lat="1" lon="2"><time> 2024-05-01T12:00:03.500 </time></trkpt>
            <trkpt lat="1" lon="2"><time>2024-05-01T12:00:04+02:00</time></trkpt>
            <trkpt lat="1" lon="2"><time>2024-05-01 noon</time></trkpt>
            <trkpt lat="1" lon="2"><time>2024-05-01T12:00:05.2500000</time></trkpt>
            </trkseg></trk></gpx>
            """.utf8)
        let (fixes, skipped) = GPXParser.parse(gpx)
        // In file order (a reader keeps it; the +02:00 one is 10:00:04 UTC; seven fraction
        // digits, .NET's round-trip format, without a zone).
        #expect(fixes.map(\.time.rfc3339) == ["2024-05-01T12:00:00Z", "2024-05-01T12:00:01Z", "2024-05-01T12:00:02Z", "2024-05-01T12:00:03.500Z",
                                              "2024-05-01T10:00:04Z", "2024-05-01T12:00:05.250Z"])
        #expect(skipped == ["bad time": 1])
    }

    /// gpsd's epx/epy are error estimates: negative ones are not an accuracy.
    @Test func negativeEpxEpyFallBackToUnknownAccuracy() {
        var parser = GPSDJSONParser()
        let line = Array(#"{"class":"TPV","mode":2,"time":"2020-01-01T00:00:00Z","lat":1,"lon":2,"epx":-5,"epy":-3}"#.utf8) + [10]
        let fixes = parser.feed(line) + parser.finish()
        #expect(fixes.map(\.horizontalAccuracyMeters) == [AccuracyModel.unknownAccuracyMeters])
    }

    /// gpsd JSON numbers beyond Double's range parse as infinity: not a speed or a course.
    @Test func infiniteSpeedAndCourseAreDropped() throws {
        let line = #"{"class":"TPV","mode":3,"time":"2025-03-12T04:58:50Z","lat":5,"lon":7,"speed":1e350,"track":-1e999}"#
        let track = try TrackReader.read(bytes: Array(line.utf8), name: "inf")
        #expect(track.fixes.count == 1)
        #expect(track.fixes.first?.speedMetersPerSecond == nil)
        #expect(track.fixes.first?.courseDegrees == nil)
    }
}
