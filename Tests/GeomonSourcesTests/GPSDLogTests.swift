import Foundation
import GeomonCore
import GeomonSources
import GeomonTestSupport
import Testing

/// The 16 receiver logs from gpsd's regression suite, read by our NMEA reader and compared
/// with what gpsd 3.22 itself reports for them (`.chk-gpsd3.22` files, parsed by our
/// `GPSDJSONParser`).
struct GPSDLogTests {
    /// Log name, fix (epoch) count from the data README's table, and the expected-output file.
    ///
    /// The table's numbers are within one of the epochs actually in the logs: e.g. bu353s4 has
    /// 25 GGA and 25 RMC sentences, 25 epochs with a fix, where the table says 26; rst39 starts
    /// with an RMC at .00 followed by GGA at .10 — two epochs — where the table counts one.
    static let logs: [(name: String, fixes: Int, check: String)] = [
        ("bundg_zeus_9", 149, "bundg_zeus_9.log.chk-gpsd3.22"),
        ("nl2008u", 9, "nl2008u.log.chk-gpsd3.22"),
        ("quectel-eg25-g", 24, "quectel-eg25-g.log.chk-gpsd3.22-LOCAL"),
        ("garmin15x", 7, "garmin15x.log.chk-gpsd3.22-LOCAL"),
        ("ublox-lea-4h", 9, "ublox-lea-4h.log.chk-gpsd3.22"),
        ("sl869", 8, "sl869.log.chk-gpsd3.22"),
        ("rst39", 40, "rst39.log.chk-gpsd3.22"),
        ("garmin-10x", 10, "garmin-10x.log.chk-gpsd3.22"),
        ("nmea-rtk", 123, "nmea-rtk.log.chk-gpsd3.22"),
        ("iTrek", 35, "iTrek.log.chk-gpsd3.22"),
        ("tomtom-mkII", 5, "tomtom-mkII.log.chk-gpsd3.22"),
        ("bu353s4", 26, "bu353s4.log.chk-gpsd3.22"),
        ("unicore-um621", 16, "unicore-um621.log.chk-gpsd3.22-LOCAL"),
        ("blumax-gps009", 4, "blumax-gps009.log.chk-gpsd3.22"),
        ("telit-he910", 188, "telit-he910.log.chk-gpsd3.22"),
        ("quectel-l76k-nmea", 150, "quectel-l76k-nmea.log.chk-gpsd3.22-LOCAL"),
    ]

    /// gpsd 3.22 moves NMEA dates before 2017-01-01 forward by 1024 GPS weeks.
    static func gpsd322Time(_ time: UTCTime) -> UTCTime {
        time.millisecondsSince1970 < 1_483_228_800_000 ? time + .seconds(619_315_200) : time
    }

    static func read(_ name: String) throws -> Track {
        try TrackReader.read(path: TestSupport.fixture("tracks/\(name)").path)
    }

    @Test(arguments: logs.map(\.name))
    func fixCountMatchesTheDataTable(name: String) throws {
        let entry = try #require(Self.logs.first { $0.name == name })
        let track = try Self.read("\(name).log")
        #expect(track.format == "nmea")
        #expect(abs(track.fixes.count - entry.fixes) <= 1, "\(name): \(track.fixes.count) fixes, table says \(entry.fixes)")
        #expect(track.fixes.allSatisfy { $0.coordinate.isValid && $0.horizontalAccuracyMeters > 0 })
    }

    /// Every fix gpsd reports for a log is one of ours, at the same time (after gpsd's 1024-week
    /// shift) and position (within 1e-6°). Ours may have one more at a cycle edge that gpsd 3.22
    /// does not report: the last epoch of a capture (gpsd ends a cycle when the next begins), the
    /// last fix before the receiver loses it (garmin-10x), the 0.1 s GGA right after the opening
    /// RMC (rst39).
    @Test(arguments: logs.map(\.name))
    func fixesMatchGPSDsOwnOutput(name: String) throws {
        let entry = try #require(Self.logs.first { $0.name == name })
        let ours = try Self.read("\(name).log").fixes
        let gpsd = try Self.read(entry.check)
        #expect(gpsd.format == "gpsd-json")
        #expect(!gpsd.fixes.isEmpty)
        var byTime: [UTCTime: Fix] = [:]
        for fix in ours { byTime[Self.gpsd322Time(fix.time)] = fix }
        // The B&G chartplotter sends RMC, GLL and GGA for the same second with positions up to
        // 4 m apart (its RMC repeats an older position); gpsd and we pick different ones.
        let tolerance = name == "bundg_zeus_9" ? 1e-4 : 1e-6
        for g in gpsd.fixes {
            guard let o = byTime[g.time] else {
                Issue.record("\(name): gpsd reports a fix at \(g.time) that we do not")
                continue
            }
            #expect(abs(o.coordinate.latitude - g.coordinate.latitude) <= tolerance, "\(name) \(g.time)")
            #expect(abs(o.coordinate.longitude - g.coordinate.longitude) <= tolerance, "\(name) \(g.time)")
        }
        let gpsdTimes = Set(gpsd.fixes.map(\.time))
        let extra = ours.indices.filter { !gpsdTimes.contains(Self.gpsd322Time(ours[$0].time)) }
        #expect(extra.count <= 1, "\(name): \(extra.count) fixes gpsd does not report")
    }

    /// Where the accuracy comes from HDOP of the same epoch, it equals gpsd 3.22's `eph`
    /// (HDOP × 19 m, × 4.75 m with DGPS).
    @Test(arguments: ["bu353s4", "tomtom-mkII", "telit-he910", "iTrek", "nmea-rtk", "bundg_zeus_9", "rst39"])
    func accuracyEqualsGPSDsEph(name: String) throws {
        let entry = try #require(Self.logs.first { $0.name == name })
        let ours = try Self.read("\(name).log").fixes
        let gpsd = try Self.read(entry.check).fixes
        var byTime: [UTCTime: Fix] = [:]
        for fix in ours { byTime[Self.gpsd322Time(fix.time)] = fix }
        var compared = 0
        for g in gpsd where g.horizontalAccuracyMeters != AccuracyModel.unknownAccuracyMeters {
            guard let o = byTime[g.time] else { continue }
            #expect(abs(o.horizontalAccuracyMeters - g.horizontalAccuracyMeters) < 0.01, "\(name) \(g.time)")
            compared += 1
        }
        #expect(compared > 0)
    }

    /// A SiRF receiver without GGA sends GSA then RMC for each epoch: the GSA describes the
    /// epoch whose RMC follows it (gpsd reports the DOP in effect at the cycle end), so every
    /// epoch's accuracy equals gpsd's `eph` here too.
    @Test func sirfEpochsTakeTheGSAThatPrecedesTheirRMC() throws {
        let ours = try Self.read("genivi_20100403_Z205_Switzerland_short.nmea").fixes
        let gpsd = try Self.read("genivi_20100403_Z205_Switzerland_short.nmea.chk-gpsd3.22-LOCAL").fixes
        var byTime: [UTCTime: Fix] = [:]
        for fix in ours { byTime[Self.gpsd322Time(fix.time)] = fix }
        var compared = 0
        for g in gpsd where g.horizontalAccuracyMeters != AccuracyModel.unknownAccuracyMeters {
            guard let o = byTime[g.time] else { continue }
            #expect(abs(o.horizontalAccuracyMeters - g.horizontalAccuracyMeters) < 0.01, "\(g.time)")
            compared += 1
        }
        #expect(compared > 200)
    }

    @Test func oldLogsAreDatedFromTheirRMC() throws {
        let fixes = try Self.read("bu353s4.log").fixes
        #expect(fixes.first?.time.rfc3339 == "2014-12-31T03:07:19Z")
        #expect(fixes.first.map { Self.gpsd322Time($0.time).rfc3339 } == "2034-08-16T03:07:19Z")
    }

    /// iTrek is two captures concatenated: no-fix RMCs of 2005-07-26 15:16, then a fix session
    /// on 2005-07-27 04:58. The first fix takes its date from its own RMC.
    @Test func concatenatedCapturesKeepTheirOwnDates() throws {
        let track = try Self.read("iTrek.log")
        #expect(track.fixes.first?.time.rfc3339 == "2005-07-27T04:58:49Z")
        #expect(track.skipped["no fix"] == 2)
    }

    /// telit-he910 is two captures concatenated: time steps back once (10:51:53.710 →
    /// 10:51:53.408). Both are kept in file order, as gpsd reports them; the engine ignores the
    /// older one.
    @Test func backwardsTimeInTheConcatenatedTelitLogIsKept() throws {
        let fixes = try Self.read("telit-he910.log").fixes
        let steps = zip(fixes, fixes.dropFirst()).filter { $1.time < $0.time }
        #expect(steps.count == 1)
        #expect(steps.first.map { "\($0.0.time) -> \($0.1.time)" } == "2019-03-12T10:51:53.710Z -> 2019-03-12T10:51:53.408Z")
    }

    /// rst39: one RMC gives the date, then 10 Hz GGA-only epochs carry it.
    @Test func ggaOnlyEpochsTakeTheLastDate() throws {
        let track = try Self.read("rst39.log")
        #expect(track.fixes.count == 41)
        #expect(track.fixes.allSatisfy { $0.time.rfc3339.hasPrefix("2014-02-19T20:4") })
        let times = track.fixes.map(\.time)
        #expect(times == times.sorted())
    }

    @Test func crlfAndProprietarySentencesAreHandled() throws {
        // nmea-rtk and bundg_zeus_9 use CRLF; bundg has SDDPT, WIMWV, IIXDR …
        #expect(try Self.read("nmea-rtk.log").skipped.keys.sorted() == ["comment"])
        #expect(try Self.read("bundg_zeus_9.log").skipped.keys.sorted() == ["comment"])
    }
}

/// Replay of a gpsd log reads its epochs as `geomon run` reads them from gpsd (`GPSDEpochs`).
struct GPSDLogEpochTests {
    /// An epoch's reports are merged, as the live source merges them: the last position, the
    /// first accuracy given, the last speed and course given; a report with an accuracy and a course completes
    /// it at once. gpsd's first report of an epoch often carries a speed it computed from the
    /// positions and no course (the quectel log: 2.547 m/s where the receiver's RMC says
    /// 0.514 m/s, course 300.5); an epoch that never gets a course is given as merged when the
    /// next starts.
    @Test func anEpochIsItsReportsMergedAsInRun() {
        let lines = """
            {"class":"TPV","mode":3,"time":"2024-05-01T10:00:00.000Z","lat":46.1,"lon":6.1,"speed":1.0}
            {"class":"TPV","mode":3,"time":"2024-05-01T10:00:00.000Z","lat":46.1001,"lon":6.1001,"eph":4.5,"speed":1.0}
            {"class":"TPV","mode":3,"time":"2024-05-01T10:00:00.000Z","lat":46.2,"lon":6.2,"eph":9.0}
            {"class":"TPV","mode":3,"time":"2024-05-01T10:00:01.000Z","lat":46.3,"lon":6.3,"epx":0,"epy":0}
            {"class":"TPV","mode":3,"time":"2024-05-01T10:00:02.000Z","lat":46.4,"lon":6.4,"epx":3,"epy":5}
            {"class":"TPV","mode":3,"time":"2024-05-01T10:00:03.000Z","lat":46.5,"lon":6.5,"eph":20.9,"speed":2.547}
            {"class":"TPV","mode":3,"time":"2024-05-01T10:00:03.000Z","lat":46.5,"lon":6.5,"eph":20.9,"speed":0.514,"track":300.5}
            {"class":"TPV","mode":3,"time":"2024-05-01T10:00:03.000Z","lat":46.6,"lon":6.6,"eph":1.0,"speed":9,"track":9}

            """
        var parser = GPSDJSONParser()
        let fixes = parser.feed(Array(lines.utf8)) + parser.finish()
        var epochs = GPSDEpochs()
        var live: [Fix] = []
        let reports: [(Double, Int64, Double?, Double?, Double?)] = [
            (46.1, 0, nil, 1.0, nil), (46.1001, 0, 4.5, 1.0, nil), (46.2, 0, 9.0, nil, nil), (46.3, 1, nil, nil, nil), (46.4, 2, 5.0, nil, nil),
            (46.5, 3, 20.9, 2.547, nil), (46.5, 3, 20.9, 0.514, 300.5), (46.6, 3, 1.0, 9, 9),
        ]
        for (lat, time, accuracy, speed, course) in reports {
            let fix = Fix(time: UTCTime(millisecondsSince1970: 1_714_557_600_000 + time * 1000), coordinate: Coordinate(latitude: lat, longitude: lat - 40),
                          horizontalAccuracyMeters: accuracy ?? AccuracyModel.unknownAccuracyMeters, speedMetersPerSecond: speed, courseDegrees: course)
            live += epochs.reported(fix, accuracyKnown: accuracy != nil)
        }
        live += epochs.flush()
        #expect(fixes.map(\.coordinate.latitude) == [46.2, 46.3, 46.4, 46.5])
        #expect(fixes.map(\.horizontalAccuracyMeters) == [4.5, AccuracyModel.unknownAccuracyMeters, 5.0, 20.9])
        #expect(fixes.map(\.speedMetersPerSecond) == [1.0, nil, nil, 0.514])
        #expect(fixes.map(\.courseDegrees) == [nil, nil, nil, 300.5])
        #expect(fixes.map(\.coordinate.latitude) == live.map(\.coordinate.latitude) && fixes.map(\.time) == live.map(\.time))
        #expect(fixes.map(\.speedMetersPerSecond) == live.map(\.speedMetersPerSecond) && fixes.map(\.courseDegrees) == live.map(\.courseDegrees))
        #expect(fixes.map(\.horizontalAccuracyMeters) == live.map(\.horizontalAccuracyMeters))
    }

    /// The bundled quectel log served by gpsd: every epoch's speed and course are the
    /// receiver's own, as the NMEA log itself reads them.
    @Test func aGpsdLogGivesTheReceiversSpeedAndCourseAsItsNMEADoes() throws {
        let served = try TrackReader.read(path: TestSupport.fixture("tracks/quectel-eg25-g.log.chk-gpsd3.22-LOCAL").path).fixes
        let nmea = try TrackReader.read(path: TestSupport.fixture("tracks/quectel-eg25-g.log").path).fixes
        let byTime = Dictionary(nmea.map { ($0.time.millisecondsSince1970, $0) }, uniquingKeysWith: { a, _ in a })
        var compared = 0
        for fix in served {
            guard let own = byTime[fix.time.millisecondsSince1970], own.courseDegrees != nil else { continue }
            compared += 1
            #expect(fix.speedMetersPerSecond.map { abs($0 - (own.speedMetersPerSecond ?? -1)) < 0.01 } == true, "\(fix.time.rfc3339)")
            #expect(fix.courseDegrees.map { abs($0 - own.courseDegrees!) < 0.01 } == true, "\(fix.time.rfc3339)")
        }
        #expect(compared >= 15, "\(compared) epochs compared")
    }
}
