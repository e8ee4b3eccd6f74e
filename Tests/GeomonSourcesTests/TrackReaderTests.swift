import Foundation
import GeomonCore
import GeomonSources
import GeomonTestSupport
import Testing

/// Builds an NMEA sentence with a correct checksum.
func nmea(_ body: String) -> String {
    let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
    let hex = String(sum, radix: 16, uppercase: true)
    return "$\(body)*\(hex.count == 1 ? "0" + hex : hex)"
}

func readText(_ text: String, name: String = "test") throws -> Track {
    try TrackReader.read(bytes: Array(text.utf8), name: name)
}

struct TrackReaderTests {
    // MARK: real tracks

    @Test func swissDriveReadsWithNULsAtReceiverRestarts() throws {
        let start = ContinuousClock.now
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/genivi_20100403_Z205_Switzerland.nmea").path)
        let elapsed = ContinuousClock.now - start
        print("Swiss NMEA (2.7 MB, debug build): \(track.fixes.count) fixes in \(elapsed), skipped \(track.skipped)")
        #expect(track.format == "nmea")
        #expect(abs(track.fixes.count - 10_327) <= 5)
        #expect(track.fixes.first?.time.rfc3339 == "2010-04-03T11:22:25.844Z")
        #expect(track.fixes.allSatisfy { abs($0.coordinate.latitude - 47) < 1 && abs($0.coordinate.longitude - 8) < 1.5 })
    }

    @Test func swissShortExcerptReads() throws {
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/genivi_20100403_Z205_Switzerland_short.nmea").path)
        #expect(track.format == "nmea")
        #expect(track.fixes.count > 200)
    }

    @Test func garminGPX11WithExtensions() throws {
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/georust_garmin_with_extensions.gpx").path)
        #expect(track.format == "gpx")
        #expect(track.fixes.count == 3540)
        #expect(track.skipped.isEmpty)
        let times = track.fixes.map(\.time)
        #expect(times == times.sorted())
    }

    /// GPX 1.0 walks from gpxpy: several trk/trkseg, an empty trkseg, and points without time.
    @Test(arguments: [("gpxpy_cerknicko-jezero.gpx", 296), ("gpxpy_korita-zbevnica.gpx", 871)])
    func gpx10WalksSkipPointsWithoutTime(file: String, points: Int) throws {
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/\(file)").path)
        #expect(track.format == "gpx")
        #expect(track.fixes.count + track.skipped["no time", default: 0] == points)
        #expect(track.fixes.count > 0)
        #expect(track.fixes.allSatisfy { $0.coordinate.isValid })
    }

    /// A GPX 1.0 rail-vehicle track whose times carry an ISO 8601 basic-format offset
    /// (`2019-01-15T00:00:27.000+0000`, as Java libraries write them): every point is a fix.
    @Test func railTrackerGPXWithBasicFormatOffsetsReadsWhole() throws {
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/openrailrouting_00c03ac99213.gpx").path)
        #expect(track.format == "gpx")
        #expect(track.fixes.count == 2493)
        #expect(track.skipped.isEmpty)
        #expect(track.noFixError == nil)
        #expect(track.fixes.first?.time.rfc3339 == "2019-01-15T00:00:27Z")
    }

    @Test func allBundledTracksAndLogsRead() throws {
        let dir = TestSupport.fixture("tracks")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".log") || $0.hasSuffix(".nmea") || $0.hasSuffix(".gpx") || $0.contains(".chk-gpsd3.22") }
        // 16 gpsd logs and their 16 expected outputs, the 13 trips of the shared tracks (the
        // Swiss drive twice), and gpsd 3.22's output for the short drive.
        #expect(names.count == 16 + 16 + 13 + 1)
        for name in names {
            let track = try TrackReader.read(path: dir.appendingPathComponent(name).path)
            #expect(!track.fixes.isEmpty, "\(name)")
        }
    }

    // MARK: errors

    @Test func missingFileIsMissing() {
        #expect { try TrackReader.read(path: "/nonexistent/track.nmea") } throws: { ($0 as? TrackError)?.isMissing == true }
    }

    @Test func unknownContentIsAnError() {
        #expect { try readText("hello\nworld\n") } throws: { ($0 as? TrackError)?.isMissing == false }
        #expect { try readText("") } throws: { ($0 as? TrackError)?.message == "empty file" }
        #expect { try TrackReader.read(bytes: [0xFF, 0x00, 0x13, 0x88, 0x01], name: "bin") } throws: { $0 is TrackError }
    }

    // MARK: NMEA quirks

    @Test func aByteOrderMarkBeforeTheFirstLineLosesNothing() throws {
        let lines = #"{"time":"2024-01-01T12:00:00Z","lat":48.1,"lon":11.5}"# + "\n" + #"{"time":"2024-01-01T12:00:01Z","lat":48.1,"lon":11.5}"#
        #expect(try readText("\u{FEFF}" + lines).fixes.count == 2)
        let gpsd = #"{"class":"TPV","mode":3,"time":"2024-01-01T12:00:00.000Z","lat":48.1,"lon":11.5}"# + "\n"
            + #"{"class":"TPV","mode":3,"time":"2024-01-01T12:00:01.000Z","lat":48.1,"lon":11.5}"#
        #expect(try readText("\u{FEFF}" + gpsd).fixes.count == 2)
    }

    @Test func aDateTheCalendarDoesNotHaveIsNoDate() throws {
        // 30 February 2020 in an RMC: not read as 1 March.
        let text = [nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,1.0,90.0,300220,,,A"),
                    nmea("GPRMC,120001.00,A,4700.0000,N,00800.0000,E,1.0,90.0,290220,,,A")].joined(separator: "\n")
        let track = try readText(text)
        #expect(!track.fixes.contains { $0.time.rfc3339.hasPrefix("2020-03-01") }, "\(track.fixes.map(\.time.rfc3339))")
        #expect(track.fixes.contains { $0.time.rfc3339 == "2020-02-29T12:00:01Z" })
    }

    @Test func garbageIsSkippedAndCountedByReason() throws {
        let good = nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,1.0,90.0,010520,,,A")
        let bad = nmea("GPRMC,120001.00,A,4700.0000,N,00800.0000,E,1.0,90.0,010520,,,A").dropLast(2) + "00"
        let text = [
            "# a comment",
            good,
            String(bad),                         // bad checksum
            "$GPGGA,120002.00,4700.00",           // truncated
            "\u{1}\u{2}binary\u{7f}noise",        // garbage
            nmea("GPRMC,120003.00,A,9100.0000,N,00800.0000,E,1.0,90.0,010520,,,A"), // lat 91°
            nmea("GPRMC,120004.00,V,,,,,,,010520,,,N"), // no fix
        ].joined(separator: "\n")
        let track = try readText(text)
        #expect(track.fixes.count == 1)
        #expect(track.skipped["bad checksum"] == 1)
        #expect(track.skipped["truncated"] == 1)
        #expect(track.skipped["garbage"] == 1)
        #expect(track.skipped["invalid coordinate"] == 1)
        #expect(track.skipped["no fix"] == 2) // the 91° epoch and the V epoch
        #expect(track.skipped["comment"] == 1)
        let fix = try #require(track.fixes.first)
        #expect(fix.time.rfc3339 == "2020-05-01T12:00:00Z")
        #expect(fix.coordinate == Coordinate(latitude: 47, longitude: 8))
        #expect(fix.speedMetersPerSecond.map { abs($0 - 0.514444) < 1e-5 } == true)
        #expect(fix.courseDegrees == 90)
    }

    @Test func nulBytesAndNoiseBeforeASentenceAreTolerated() throws {
        let s = nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,1.0,90.0,010520,,,A")
        let bytes: [UInt8] = [0, 0, 0xFF, 0x80] + Array(s.utf8) + [0, 13, 10]
        let track = try TrackReader.read(bytes: bytes, name: "nul")
        #expect(track.fixes.count == 1)
    }

    @Test func lineEndingsLFCRLFAndCRGiveTheSameFixes() throws {
        let lines = (0..<5).map { nmea("GNRMC,12000\($0).00,A,4700.000\($0),N,00800.0000,E,1.0,90.0,010520,,,A") }
        let lf = try readText(lines.joined(separator: "\n"))
        let crlf = try readText(lines.joined(separator: "\r\n"))
        let cr = try readText(lines.joined(separator: "\r"))
        #expect(lf.fixes.count == 5)
        #expect(lf.fixes == crlf.fixes)
        #expect(lf.fixes == cr.fixes)
    }

    @Test func oneFixPerEpochFromGGAandRMCwithGSTAccuracy() throws {
        let text = [
            nmea("GNGGA,120000.00,4700.0000,N,00800.0000,E,1,10,1.0,500.0,M,48.0,M,,"),
            nmea("GNGSA,A,3,01,02,03,04,,,,,,,,,2.0,1.0,1.5"),
            nmea("GNGST,120000.00,1.0,2.0,1.0,0.0,3.0,4.0,5.0"),
            nmea("GNRMC,120000.00,A,4700.0000,N,00800.0000,E,0.0,,010520,,,A"),
            nmea("GNGGA,120001.00,4700.0000,N,00800.0000,E,1,10,2.0,500.0,M,48.0,M,,"),
            nmea("GNRMC,120001.00,A,4700.0000,N,00800.0000,E,0.0,,010520,,,A"),
            nmea("GNRMC,120002.00,A,4700.0000,N,00800.0000,E,0.0,,010520,,,D"),
        ].joined(separator: "\r\n")
        let fixes = try readText(text).fixes
        #expect(fixes.count == 3)
        #expect(fixes.map(\.horizontalAccuracyMeters) == [10, 38, 4.75]) // 2·√(3²+4²); 2.0×19; GSA 1.0×4.75
    }

    @Test func dayRollsOverAtMidnightWithoutANewDate() throws {
        let text = [
            nmea("GPRMC,235959.00,A,4700.0000,N,00800.0000,E,0.0,,311220,,,A"),
            nmea("GPGGA,000000.00,4700.0000,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,"),
            nmea("GPGGA,000001.00,4700.0000,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,"),
        ].joined(separator: "\n")
        let times = try readText(text).fixes.map(\.time.rfc3339)
        #expect(times == ["2020-12-31T23:59:59Z", "2021-01-01T00:00:00Z", "2021-01-01T00:00:01Z"])
    }

    /// GPX whose elements carry a namespace prefix (Python's ElementTree without a default
    /// namespace writes `<ns0:gpx>`) is GPX.
    @Test func aPrefixedGPXIsGPX() throws {
        let text = """
            <?xml version='1.0' encoding='us-ascii'?>
            <ns0:gpx xmlns:ns0="http://www.topografix.com/GPX/1/1" version="1.1" creator="x"><ns0:trk><ns0:trkseg>
            <ns0:trkpt lat="46.3" lon="6.9"><ns0:time>2024-05-01T12:00:00Z</ns0:time></ns0:trkpt>
            <ns0:trkpt lat="46.31" lon="6.9"><ns0:time>2024-05-01T12:00:10Z</ns0:time></ns0:trkpt>
            </ns0:trkseg></ns0:trk></ns0:gpx>
            """
        let track = try readText(text)
        #expect(track.format == "gpx")
        #expect(track.fixes.map(\.coordinate.latitude) == [46.3, 46.31])
    }

    /// A leap second (23:59:60, as at the end of 2016) is the last millisecond of its day: the
    /// epoch after it, at midnight, is a fix of its own.
    @Test func aLeapSecondStaysInItsDay() throws {
        let text = [
            nmea("GPRMC,235959.00,A,4700.0000,N,00800.0000,E,0.0,,311216,,,A"),
            nmea("GPGGA,235960.00,4700.0010,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,"),
            nmea("GPRMC,000000.00,A,4700.0020,N,00800.0000,E,0.0,,010117,,,A"),
        ].joined(separator: "\n")
        let fixes = try readText(text).fixes
        #expect(fixes.map(\.time.rfc3339) == ["2016-12-31T23:59:59Z", "2016-12-31T23:59:59.999Z", "2017-01-01T00:00:00Z"])
        #expect(fixes.last.map { abs($0.coordinate.latitude - (47 + 0.002 / 60)) < 1e-9 } == true)
    }

    /// GGA-only epochs before the first date are held and backfilled from it (across midnight).
    @Test func epochsBeforeTheFirstDateAreBackfilled() throws {
        let text = [
            nmea("GPGGA,235958.00,4700.0000,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,"),
            nmea("GPGGA,235959.00,4700.0000,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,"),
            nmea("GPRMC,000000.00,A,4700.0000,N,00800.0000,E,0.0,,010121,,,A"),
        ].joined(separator: "\n")
        let times = try readText(text).fixes.map(\.time.rfc3339)
        #expect(times == ["2020-12-31T23:59:58Z", "2020-12-31T23:59:59Z", "2021-01-01T00:00:00Z"])
    }

    @Test func epochsThatNeverGetADateAreCounted() throws {
        let text = nmea("GPGGA,120000.00,4700.0000,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,")
        let track = try readText(text)
        #expect(track.fixes.isEmpty)
        #expect(track.skipped["no date"] == 1)
    }

    /// Two captures concatenated: time goes backwards; fixes stay in file order with their own
    /// dates (the engine ignores fixes older than the last one it processed).
    @Test func backwardsTimeIsKeptInFileOrder() throws {
        let text = [
            nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,0.0,,020520,,,A"),
            nmea("GPRMC,120001.00,A,4700.0000,N,00800.0000,E,0.0,,020520,,,A"),
            nmea("GPRMC,080000.00,A,4700.0000,N,00800.0000,E,0.0,,010520,,,A"),
            nmea("GPGGA,080001.00,4700.0000,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,"),
        ].joined(separator: "\n")
        let times = try readText(text).fixes.map(\.time.rfc3339)
        #expect(times == ["2020-05-02T12:00:00Z", "2020-05-02T12:00:01Z", "2020-05-01T08:00:00Z", "2020-05-01T08:00:01Z"])
    }

    @Test func anyTalkerAndGNSareAccepted() throws {
        let text = [
            nmea("BDGNS,120000.00,4700.0000,N,00800.0000,E,NAA,10,1.0,500.0,48.0,,"),
            nmea("GARMC,120000.00,A,4700.0000,N,00800.0000,E,0.0,,010520,,,A"),
            nmea("GLGNS,120001.00,4700.0000,N,00800.0000,E,NNN,10,1.0,500.0,48.0,,"),
        ].joined(separator: "\n")
        let track = try readText(text)
        #expect(track.fixes.count == 1)
        #expect(track.skipped["no fix"] == 1)
    }

    /// The receiver lost its fix within the epoch: GGA with its last position, then RMC V. The
    /// last position sentence of an epoch decides whether it is a fix.
    @Test func aLaterNoFixSentenceOfTheEpochCancelsItsFix() throws {
        let text = [
            nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,A"),
            nmea("GPGGA,120000.00,4700.0000,N,00800.0000,E,0,00,99.9,500.0,M,48.0,M,,"),
            nmea("GPGGA,120001.00,4900.0000,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,"),
            nmea("GPRMC,120001.00,V,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,N"),
            nmea("GPRMC,120002.00,A,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,A"),
            nmea("GPGLL,4600.0000,N,00800.0000,E,120002.00,V,N"),
            nmea("GNGGA,120003.00,4700.0000,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,"),
            nmea("GNGNS,120003.00,4700.0000,N,00800.0000,E,NN,00,,,,,"),
            // A fix reported after the no-fix sentence stands.
            nmea("GPGGA,120004.00,4700.0000,N,00800.0000,E,0,00,99.9,500.0,M,48.0,M,,"),
            nmea("GPRMC,120004.00,A,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,A"),
        ].joined(separator: "\n")
        let track = try readText(text)
        #expect(track.fixes.map(\.time.rfc3339) == ["2020-05-01T12:00:04Z"])
        #expect(track.skipped["no fix"] == 4)
    }

    /// GST with zero sigmas (a receiver that does not estimate its error) says nothing about
    /// the accuracy: HDOP or the unknown default is used, never 0 m.
    @Test func gstWithZeroOrNegativeSigmasLeavesTheAccuracyToHDOP() throws {
        let text = [
            nmea("GPGGA,120000.00,4700.0000,N,00800.0000,E,1,08,2.0,500.0,M,48.0,M,,"),
            nmea("GPGST,120000.00,0.0,0.0,0.0,0.0,0.0,0.0,0.0"),
            nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,A"),
            nmea("GPRMC,120001.00,A,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,A"),
            nmea("GPGST,120001.00,0.0,0.0,0.0,0.0,0.0,0.0,0.0"),
            nmea("GPRMC,120002.00,A,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,A"),
            nmea("GPGST,120002.00,1.0,1.0,1.0,0.0,-3.0,4.0,1.0"),
            nmea("GPRMC,120003.00,A,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,A"),
            nmea("GPGST,120003.00,1.0,1.0,1.0,0.0,3.0,0.0,1.0"),
        ].joined(separator: "\n")
        let fixes = try readText(text).fixes
        let unknown = AccuracyModel.unknownAccuracyMeters
        #expect(fixes.map(\.horizontalAccuracyMeters) == [38, unknown, unknown, unknown]) // HDOP 2.0 × 19 m
    }

    /// A receiver restart cuts a sentence off and the next one follows on the same line (the
    /// line end was lost): each '$' starts a sentence, as in gpsd.
    /// A long burst of noise before a sentence on the same line (a receiver restart sending
    /// binary) loses the sentence neither in one piece nor in chunks of any size.
    @Test func aSentenceAfterALongBurstOfNoiseIsRead() throws {
        let text = nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,A") + "\r\n"
            + String(repeating: "A", count: 450) + nmea("GPRMC,120001.00,A,4700.0010,N,00800.0000,E,0.0,0.0,010520,,,A") + "\r\n"
        let track = try readText(text)
        #expect(track.fixes.count == 2, "\(track.skipped)")
        for chunk in [1, 100, 4096] {
            let bytes = Array(text.utf8)
            var parser = NMEAParser()
            var fixes: [Fix] = []
            for start in stride(from: 0, to: bytes.count, by: chunk) { fixes += parser.feed(Array(bytes[start..<min(start + chunk, bytes.count)])) }
            fixes += parser.finish()
            #expect(fixes == track.fixes, "chunks of \(chunk)")
        }
    }

    @Test func aWholeSentenceAfterACutOffOneOnTheSameLineIsRead() throws {
        let text = [
            nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,0.0,0.0,010520,,,A"),
            "$GPRMC,1200" + nmea("GPRMC,120001.00,A,4700.0010,N,00800.0000,E,0.0,0.0,010520,,,A"),
            nmea("GPRMC,120002.00,A,4700.0020,N,00800.0000,E,0.0,0.0,010520,,,A")
                + nmea("GPRMC,120003.00,A,4700.0030,N,00800.0000,E,0.0,0.0,010520,,,A"),
        ].joined(separator: "\r\n")
        let track = try readText(text)
        #expect(track.fixes.map(\.time.rfc3339) == ["2020-05-01T12:00:00Z", "2020-05-01T12:00:01Z", "2020-05-01T12:00:02Z", "2020-05-01T12:00:03Z"])
        #expect(track.skipped == ["truncated": 1])
    }

    /// The streaming parser gives the same fixes whatever the chunk size.
    @Test(arguments: [1, 7, 4096])
    func streamingInChunksEqualsWholeFile(chunk: Int) throws {
        let data = try Data(contentsOf: TestSupport.fixture("tracks/quectel-eg25-g.log"))
        let bytes = [UInt8](data)
        var parser = NMEAParser()
        var fixes: [Fix] = []
        var i = 0
        while i < bytes.count {
            fixes += parser.feed(Array(bytes[i..<min(i + chunk, bytes.count)]))
            i += chunk
        }
        fixes += parser.finish()
        let whole = try TrackReader.read(bytes: bytes, name: "q")
        #expect(fixes == whole.fixes)
        #expect(parser.skipped == whole.skipped)
    }

    // MARK: GPX quirks

    @Test func gpxWithoutSpeedAndCourseGetsThoseOfTheSegmentBeforeEachPoint() throws {
        // 10 m north in 2 s, then 10 m east in 1 s, then the same point 2 min later.
        let gpx = """
        <gpx><trk><trkseg>
          <trkpt lat="0" lon="0"><time>2020-05-01T12:00:00Z</time></trkpt>
          <trkpt lat="0.0000904369" lon="0"><time>2020-05-01T12:00:02Z</time></trkpt>
          <trkpt lat="0.0000904369" lon="0.0000898315"><time>2020-05-01T12:00:03Z</time><speed>4</speed></trkpt>
          <trkpt lat="0.0000904369" lon="0.0000898315"><time>2020-05-01T12:02:03Z</time></trkpt>
        </trkseg></trk></gpx>
        """
        let fixes = try readText(gpx).fixes
        #expect(fixes.count == 4)
        #expect(fixes[0].speedMetersPerSecond == nil && fixes[0].courseDegrees == nil)
        let north = try #require(fixes[1].speedMetersPerSecond)
        #expect(abs(north - 5) < 0.01, "\(north)")
        #expect(abs(try #require(fixes[1].courseDegrees)) < 0.1)
        // A recorded speed is kept; only the missing course is derived.
        #expect(fixes[2].speedMetersPerSecond == 4)
        #expect(abs(try #require(fixes[2].courseDegrees) - 90) < 0.1)
        // Across a gap longer than 60 s nothing is derived.
        #expect(fixes[3].speedMetersPerSecond == nil && fixes[3].courseDegrees == nil)
    }

    @Test func gpxQuirks() throws {
        let gpx = """
        <?xml version="1.0"?>
        <!-- a comment with <trkpt> inside -->
        <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1">
        <metadata><time>2001-01-01T00:00:00Z</time></metadata>
        <trk><trkseg>
          <trkpt lat='47.5' lon="8.5"><time>2020-05-01T12:00:00Z</time><hdop>2</hdop>
            <extensions><gpxtpx:TrackPointExtension><gpxtpx:speed>99</gpxtpx:speed><time>1999-01-01T00:00:00Z</time></gpxtpx:TrackPointExtension></extensions>
          </trkpt>
          <trkpt lat="47.6" lon="8.6"/>
        </trkseg><trkseg>
          <trkpt lat="95" lon="8.6"><time>2020-05-01T12:00:02Z</time></trkpt>
          <trkpt lat="47.7" lon="8.7"><time> 2020-05-01T12:00:03.500+02:00 </time><fix>dgps</fix><hdop>2</hdop><speed>1.5</speed></trkpt>
          <trkpt lat="47.8" lon="8.8"><time>yesterday</time></trkpt>
          <trkpt lat="47.9" lon="8.9"><time>2020-05-01T12:00:04Z</time><fix>none</fix></trkpt>
        </trkseg></trk>
        </gpx>
        """
        let track = try readText(gpx)
        #expect(track.format == "gpx")
        #expect(track.fixes.count == 2)
        #expect(track.fixes.map(\.time.rfc3339) == ["2020-05-01T12:00:00Z", "2020-05-01T10:00:03.500Z"])
        #expect(track.fixes.map(\.horizontalAccuracyMeters) == [38, 9.5])
        #expect(track.fixes[0].speedMetersPerSecond == nil)
        #expect(track.fixes[1].speedMetersPerSecond == 1.5)
        #expect(track.skipped == ["no time": 1, "invalid coordinate": 1, "bad time": 1, "no fix": 1])
        #expect(track.skippedText == "4 skipped (1 bad time, 1 invalid coordinate, 1 no fix, 1 no time)")
        #expect(track.noFixError == nil)
    }

    // MARK: speed and course

    /// The same four fixes in every track format: speed −5 kn (−2.57 m/s) with course 400°, a
    /// speed of 5·10¹³ m/s with course 12°, a valid speed with course −90°, and a valid speed
    /// with course 360° (north, given as 0°). Impossible values are dropped and counted; the
    /// fixes are kept.
    static let motionTracks: [(format: String, text: String)] = [
        ("nmea", [
            nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,-5.0,400.0,010520,,,A"),
            nmea("GPRMC,120200.00,A,4700.0000,N,00800.0000,E,99999999999999,12.0,010520,,,A"),
            nmea("GPRMC,120400.00,A,4700.0000,N,00800.0000,E,1.0,-90,010520,,,A"),
            nmea("GPRMC,120600.00,A,4700.0000,N,00800.0000,E,2.0,360.0,010520,,,A"),
        ].joined(separator: "\n")),
        ("jsonl", """
        {"time":"2020-05-01T12:00:00Z","lat":47,"lon":8,"speed_mps":-2.57,"course_deg":400}
        {"time":"2020-05-01T12:02:00Z","lat":47,"lon":8,"speed_mps":5e13,"course_deg":12}
        {"time":"2020-05-01T12:04:00Z","lat":47,"lon":8,"speed_mps":0.51,"course_deg":-90}
        {"time":"2020-05-01T12:06:00Z","lat":47,"lon":8,"speed_mps":1.03,"course_deg":360}
        """),
        ("gpx", """
        <gpx version="1.0"><trk><trkseg>
          <trkpt lat="47" lon="8"><time>2020-05-01T12:00:00Z</time><speed>-2.57</speed><course>400</course></trkpt>
          <trkpt lat="47" lon="8"><time>2020-05-01T12:02:00Z</time><speed>5e13</speed><course>12</course></trkpt>
          <trkpt lat="47" lon="8"><time>2020-05-01T12:04:00Z</time><speed>0.51</speed><course>-90</course></trkpt>
          <trkpt lat="47" lon="8"><time>2020-05-01T12:06:00Z</time><speed>1.03</speed><course>360</course></trkpt>
        </trkseg></trk></gpx>
        """),
        ("gpsd-json", """
        {"class":"TPV","mode":3,"time":"2020-05-01T12:00:00.000Z","lat":47,"lon":8,"eph":10,"speed":-2.57,"track":400}
        {"class":"TPV","mode":3,"time":"2020-05-01T12:02:00.000Z","lat":47,"lon":8,"eph":10,"speed":5e13,"track":12}
        {"class":"TPV","mode":3,"time":"2020-05-01T12:04:00.000Z","lat":47,"lon":8,"eph":10,"speed":0.51,"track":-90}
        {"class":"TPV","mode":3,"time":"2020-05-01T12:06:00.000Z","lat":47,"lon":8,"eph":10,"speed":1.03,"track":360}
        """),
    ]

    @Test(arguments: motionTracks)
    func impossibleSpeedsAndCoursesAreDroppedAndCounted(format: String, text: String) throws {
        let track = try readText(text)
        #expect(track.format == format)
        #expect(track.fixes.count == 4)
        #expect(track.fixes.map { $0.speedMetersPerSecond != nil } == [false, false, true, true])
        #expect(track.fixes.map(\.courseDegrees) == [nil, 12, nil, 0])
        #expect(track.skipped == ["invalid speed": 2, "invalid course": 2])
    }

    @Test func speedLimitIsAboveEveryAircraftAndCourseIsWithinACircle() {
        #expect(ReportedMotion.speed(0) == 0)
        #expect(ReportedMotion.speed(300) == 300) // an airliner
        #expect(ReportedMotion.speed(ReportedMotion.maxSpeedMetersPerSecond + 1) == nil)
        #expect(ReportedMotion.speed(-0.1) == nil)
        #expect(ReportedMotion.speed(.nan) == nil)
        #expect(ReportedMotion.speed(.infinity) == nil)
        #expect(ReportedMotion.course(0) == 0)
        #expect(ReportedMotion.course(359.9) == 359.9)
        #expect(ReportedMotion.course(360) == 0)
        #expect(ReportedMotion.course(360.1) == nil)
        #expect(ReportedMotion.course(-1) == nil)
        #expect(ReportedMotion.course(.nan) == nil)
    }

    // MARK: wrong dates

    /// One fix dated far from both neighbours, in every track format: an RMC of a receiver
    /// after a GPS week-number rollover (1999 between 2019 fixes), a JSON line in 2204. It is
    /// counted as `time jump`; the rest of the track is kept.
    static let timeJumpTracks: [(format: String, text: String)] = [
        ("nmea", [
            nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,0.0,,010419,,,A"),
            nmea("GPRMC,120001.00,A,4700.0000,N,00800.0000,E,0.0,,010419,,,A"),
            nmea("GPRMC,120002.00,A,4700.0000,N,00800.0000,E,0.0,,170899,,,A"),
            nmea("GPRMC,120003.00,A,4700.0000,N,00800.0000,E,0.0,,010419,,,A"),
        ].joined(separator: "\n")),
        ("jsonl", """
        {"time":"2019-04-01T12:00:00Z","lat":47,"lon":8}
        {"time":"2019-04-01T12:00:01Z","lat":47,"lon":8}
        {"time":"2204-04-01T12:00:02Z","lat":47,"lon":8}
        {"time":"2019-04-01T12:00:03Z","lat":47,"lon":8}
        """),
        ("gpx", """
        <gpx><trk><trkseg>
          <trkpt lat="47" lon="8"><time>2019-04-01T12:00:00Z</time></trkpt>
          <trkpt lat="47" lon="8"><time>2019-04-01T12:00:01Z</time></trkpt>
          <trkpt lat="47" lon="8"><time>1999-08-17T12:00:02Z</time></trkpt>
          <trkpt lat="47" lon="8"><time>2019-04-01T12:00:03Z</time></trkpt>
        </trkseg></trk></gpx>
        """),
        ("gpsd-json", """
        {"class":"TPV","mode":3,"time":"2019-04-01T12:00:00.000Z","lat":47,"lon":8,"eph":10}
        {"class":"TPV","mode":3,"time":"2019-04-01T12:00:01.000Z","lat":47,"lon":8,"eph":10}
        {"class":"TPV","mode":3,"time":"1999-08-17T12:00:02.000Z","lat":47,"lon":8,"eph":10}
        {"class":"TPV","mode":3,"time":"2019-04-01T12:00:03.000Z","lat":47,"lon":8,"eph":10}
        """),
    ]

    @Test(arguments: timeJumpTracks)
    func aFixDatedFarFromBothNeighboursIsATimeJump(format: String, text: String) throws {
        let track = try readText(text)
        #expect(track.format == format)
        #expect(track.fixes.map(\.time.rfc3339) == ["2019-04-01T12:00:00Z", "2019-04-01T12:00:01Z", "2019-04-01T12:00:03Z"])
        #expect(track.skipped == ["time jump": 1])
    }

    /// The first and the last fix have one neighbour each: a wrong first date is dropped when
    /// the next two fixes agree with each other, a wrong last one when it is far from the one
    /// before. Two consecutive fixes that agree confirm a new time, however far it jumped.
    @Test func wrongFirstAndLastDatesAreDroppedAndTwoAgreeingFixesConfirmAJump() throws {
        let text = """
        {"time":"2204-05-01T12:00:00Z","lat":47,"lon":8}
        {"time":"2024-05-01T12:00:01Z","lat":47,"lon":8}
        {"time":"2024-05-01T12:00:02Z","lat":47,"lon":8}
        {"time":"2024-09-01T08:00:00Z","lat":47,"lon":8}
        {"time":"2024-09-01T08:00:01Z","lat":47,"lon":8}
        {"time":"1980-01-06T00:00:00Z","lat":47,"lon":8}
        """
        let track = try readText(text)
        #expect(track.fixes.map(\.time.rfc3339) == ["2024-05-01T12:00:01Z", "2024-05-01T12:00:02Z", "2024-09-01T08:00:00Z", "2024-09-01T08:00:01Z"])
        #expect(track.skipped == ["time jump": 2])
        // A wrong second date does not cost the first fix.
        let second = try readText("""
        {"time":"2024-05-01T12:00:00Z","lat":47,"lon":8}
        {"time":"2204-05-01T12:00:01Z","lat":47,"lon":8}
        {"time":"2024-05-01T12:00:02Z","lat":47,"lon":8}
        """)
        #expect(second.fixes.map(\.time.rfc3339) == ["2024-05-01T12:00:00Z", "2024-05-01T12:00:02Z"])
    }

    /// A logger switched off for days: a fix alone between silences of less than a week keeps.
    @Test func aSparseLoggerKeepsEveryFix() throws {
        let text = (0..<5).map { #"{"time":"2024-05-0\#(1 + 2 * $0)T12:00:00Z","lat":47,"lon":8}"# }.joined(separator: "\n")
        let track = try readText(text)
        #expect(track.fixes.count == 5)
        #expect(track.skipped.isEmpty)
    }

    // MARK: JSON

    @Test func jsonLines() throws {
        let text = """
        {"time":"2020-05-01T12:00:00Z","lat":47.5,"lon":8.5,"accuracy_m":12.5,"speed_mps":3,"course_deg":180}

        {"time":"2020-05-01T12:00:01Z","lat":47.5,"lon":8.5}
        {"time":"2020-05-01T12:00:02Z","lat":"x","lon":8.5}
        {"time":"2020-05-01T12:00:03Z","lat":47.5,"lon":181}
        {"time":"2020-05-01T12:00:04Z","lat":47.5,"lon":8.5,"accuracy_m":-1}
        {"time":"2020-05-01T12:00:05Z","lat":47.5,
        {"lat":47.5,"lon":8.5}
        """
        let track = try readText(text)
        #expect(track.format == "jsonl")
        #expect(track.fixes.count == 2)
        #expect(track.fixes[0].horizontalAccuracyMeters == 12.5)
        #expect(track.fixes[0].speedMetersPerSecond == 3)
        #expect(track.fixes[0].courseDegrees == 180)
        #expect(track.fixes[1].horizontalAccuracyMeters == AccuracyModel.unknownAccuracyMeters)
        #expect(track.skipped == ["no position": 1, "invalid coordinate": 1, "invalid accuracy": 1, "malformed": 1, "no time": 1])
    }

    /// A JSON-lines track whose fixes carry a `class` of their own is no gpsd log: its fixes
    /// are read, not dropped as gpsd reports of another class.
    @Test func aJSONLinesTrackWithAClassMemberIsJSONLines() throws {
        let track = try readText("""
            {"time":"2024-05-01T12:00:00Z","lat":52.5,"lon":13.4,"accuracy_m":5,"class":"car"}
            {"time":"2024-05-01T12:00:01Z","lat":52.5,"lon":13.4,"accuracy_m":5,"class": "car"}
            """)
        #expect(track.format == "jsonl")
        #expect(track.fixes.count == 2)
        // gpsd's own classes still say gpsd JSON, with a space after the colon too.
        let gpsd = try readText(#"{"class": "TPV","mode":3,"time":"2024-05-01T12:00:00.000Z","lat":52.5,"lon":13.4,"eph":5}"#)
        #expect(gpsd.format == "gpsd-json" && gpsd.fixes.count == 1)
    }

    /// A line over the length limit is counted where it ends the input too, and counts as a
    /// line: the error of a line after it names that line.
    @Test func anOverLongLineIsCountedAndNumbered() throws {
        let long = "{\"x\":\"" + String(repeating: "A", count: 70_000)
        for format in ["jsonl", "gpsd-json"] {
            let first = format == "jsonl" ? #"{"time":"2024-05-01T12:00:00Z","lat":1,"lon":2}"#
                : #"{"class":"TPV","mode":3,"time":"2024-05-01T12:00:00.000Z","lat":1,"lon":2,"eph":5}"#
            let track = try readText(first + "\n" + long)
            #expect(track.format == format)
            #expect(track.fixes.count == 1 && track.skipped == ["garbage": 1], "\(format): \(track.skipped)")
        }
        // Read as a command's output is, in chunks: the long line outgrows the carry.
        var parser = JSONLinesParser()
        let bytes = Array((#"{"time":"2024-05-01T12:00:00Z","lat":1,"lon":2}"# + "\n" + long + "\n{bad}\n").utf8)
        for start in stride(from: 0, to: bytes.count, by: 4096) { _ = parser.feed(Array(bytes[start..<min(start + 4096, bytes.count)])) }
        _ = parser.finish()
        #expect(parser.skipped == ["garbage": 1, "malformed": 1])
        #expect(parser.lastError?.hasPrefix("line 3:") == true, "\(parser.lastError ?? "-")")
    }

    /// NUL bytes before a line (a log appended to across a power loss) lose nothing, in gpsd
    /// JSON and in JSON lines alike.
    @Test func nulBytesBeforeAJSONLineLoseNothing() throws {
        let nuls = String(repeating: "\u{0}", count: 3)
        let gpsd = try readText(nuls + #"{"class":"TPV","mode":3,"time":"2024-05-01T12:00:00.000Z","lat":1,"lon":2,"eph":5,"track":0}"# + "\n")
        #expect(gpsd.format == "gpsd-json")
        #expect(gpsd.fixes.count == 1 && gpsd.skipped.isEmpty, "\(gpsd.skipped)")
        let lines = try readText(#"{"time":"2024-05-01T12:00:00Z","lat":1,"lon":2}"# + "\n" + nuls + #"{"time":"2024-05-01T12:00:01Z","lat":1,"lon":2}"# + "\n")
        #expect(lines.format == "jsonl")
        #expect(lines.fixes.count == 2 && lines.skipped.isEmpty, "\(lines.skipped)")
    }

    /// `geomon export --format jsonl` writes the fixes, then the events: replaying the export
    /// reads the fixes and counts the event lines as skipped.
    @Test func exportedEventLinesAreSkippedWithACount() throws {
        let text = """
        {"time":"2010-04-03T13:11:55Z","lat":46.3157983,"lon":6.9368783,"accuracy_m":17.1}
        {"time":"2010-04-03T13:11:56Z","lat":46.315815,"lon":6.9369467,"accuracy_m":17.1}
        {"id":"e5347e03492aa063","type":"enter","fence":"aigle-junction","fence_name":"Junction","time":"2010-04-03T13:11:57Z","lat":46.315838,"lon":6.937012,"accuracy_m":17.1,"rule":"enter"}
        """
        let track = try readText(text)
        #expect(track.fixes.count == 2)
        #expect(track.skipped == ["event line": 1])
        // Another "type" (a coarse plugin's, say) is a member like any other: the fix is read.
        let plugin = try readText(#"{"type":"wifi","time":"2024-05-01T12:00:00Z","lat":46.9,"lon":7.4,"accuracy_m":800}"#)
        #expect(plugin.fixes.count == 1 && plugin.skipped.isEmpty)
    }

    @Test func gpsdJSONDeduplicatesByTimeAndTakesEph() throws {
        let text = """
        {"class":"VERSION","release":"3.22"}
        {"class":"TPV","mode":1,"time":"2020-05-01T12:00:00.000Z"}
        {"class":"TPV","mode":2,"time":"2020-05-01T12:00:01.000Z","lat":47.5,"lon":8.5}
        {"class":"SKY","hdop":1.0}
        {"class":"TPV","mode":3,"time":"2020-05-01T12:00:01.000Z","lat":47.50001,"lon":8.5,"eph":12.0}
        {"class":"TPV","mode":3,"time":"2020-05-01T12:00:02.000Z","lat":47.5,"lon":8.5,"epx":3.0,"epy":4.0}
        {"class":"TPV","mode":3,"time":"2020-05-01T12:00:03.000Z","lat":47.5,"lon":8.5,"speed":2.5,"track":45}
        {"class":"TPV","mode":3,"time":"2020-05-01T12:00:04.000Z","lat":null,"lon":8.5}
        """
        let track = try readText(text)
        #expect(track.format == "gpsd-json")
        #expect(track.fixes.map(\.time.rfc3339) == ["2020-05-01T12:00:01Z", "2020-05-01T12:00:02Z", "2020-05-01T12:00:03Z"])
        #expect(track.fixes[0].coordinate.latitude == 47.50001)
        #expect(track.fixes.map(\.horizontalAccuracyMeters) == [12, 4, AccuracyModel.unknownAccuracyMeters])
        #expect(track.fixes[2].speedMetersPerSecond == 2.5)
        #expect(track.skipped == ["no fix": 1, "invalid coordinate": 1])
    }
}

struct NMEAParserTests {
    /// A live reader can close an epoch without waiting for the next one.
    @Test func endEpochEmitsTheOpenEpochAndInputContinues() {
        var parser = NMEAParser()
        let first = parser.feed(Array((nmea("GPRMC,120000.00,A,4700.0000,N,00800.0000,E,0.0,,010520,,,A") + "\r\n").utf8))
        #expect(first.isEmpty, "the epoch is still open")
        #expect(parser.endEpoch().map(\.time.rfc3339) == ["2020-05-01T12:00:00Z"])
        #expect(parser.endEpoch().isEmpty)
        let more = parser.feed(Array((nmea("GPGGA,120001.00,4700.0000,N,00800.0000,E,1,08,1.0,500.0,M,48.0,M,,") + "\n").utf8))
        #expect(more.isEmpty)
        #expect(parser.finish().map(\.time.rfc3339) == ["2020-05-01T12:00:01Z"])
    }
}
