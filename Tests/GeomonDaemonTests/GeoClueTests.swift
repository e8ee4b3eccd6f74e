import Foundation
import GeomonCore
import GeomonGeoClue
import GeomonTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `plugin: geoclue` against a real GeoClue 2.6 on a private system bus (GeoClueHarness).
@Suite(.serialized, .enabled(if: GeoClueHarness.shouldRun, "GeoClue tests need root, dbus, geoclue-2.0 and geoclue-2-demo"))
struct GeoClueTests {
    typealias Daemon = RunCommandTests.Daemon

    /// Every 3rd fix of the first 150 of the Swiss drive (a real 1 Hz car log): 50 points.
    static func sampledDrive(_ dir: TemporaryDirectory) throws -> (points: [(lat: Double, lon: Double)], file: String) {
        let text = try String(contentsOf: TestSupport.fixture("replay/swiss-drive.jsonl"), encoding: .utf8)
        let fixes = text.split(separator: "\n").prefix(150).compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let points = stride(from: 0, to: fixes.count, by: 3).map { (lat: fixes[$0]["lat"] as! Double, lon: fixes[$0]["lon"] as! Double) }
        let file = try dir.write("drive.jsonl", points.map { "{\"lat\":\($0.lat),\"lon\":\($0.lon)}" }.joined(separator: "\n") + "\n")
        return (points, file)
    }

    static func events(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").compactMap { line -> String? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let type = o["type"] as? String else { return nil }
            return "\(type) \(o["fence"] as? String ?? "-")"
        }
    }

    @Test func anExactTrackThroughGeoClueDecidesWhatAReplayOfItDecides() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (points, file) = try Self.sampledDrive(dir)
        // A 100 m circle on every 10th point. GeoClue stamps the fed fixes one second apart, so
        // the drive runs three times as fast: the speed screen is widened to match.
        let fences = stride(from: 5, to: points.count, by: 10).map { i in
            "  - {id: p\(i), circle: {lat: \(points[i].lat), lon: \(points[i].lon), radius: 100m}}"
        }.joined(separator: "\n")
        let profile = try dir.write("exact.yaml", """
            version: 1
            name: geoclue-exact
            mode: significant-change
            sources:
              coarse: {plugin: geoclue, accuracy: exact}
            policy: {max_speed: 500 km/h, max_acceleration: 50 m/s^2}
            significant_change: {distance: 100km, min_interval: 1s}
            transitions: {hysteresis: 10m, confirm: 1, initial: silent}
            fences:
            \(fences)

            """)
        // The same points as a recording, one second apart, at the accuracy geomon assumes for
        // GeoClue's "0 m" (HDOP <= 1): the replay's coarse track.
        let recorded = try dir.write("recorded.jsonl", points.enumerated().map { i, p in
            "{\"time\":\"2026-01-01T00:\(String(format: "%02d", i / 60)):\(String(format: "%02d", i % 60))Z\",\"lat\":\(p.lat),\"lon\":\(p.lon),\"accuracy_m\":30}"
        }.joined(separator: "\n") + "\n")
        let replay = try runGeomon(["replay", "--profile", profile, "--coarse", recorded, "--format", "json", recorded])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        let expected = Self.events(replay.stdout).filter { !$0.hasPrefix("location") }
        #expect(expected.count == 8, "\(expected)")

        let geoclue = try GeoClueHarness(track: file)
        try geoclue.startAgent()
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("g.db"), "--print-events", "--log-level", "info"], in: dir, environment: geoclue.environment)
        #expect(daemon.waitForLog("GeoClue started"), "\(daemon.stderr)\n\(geoclue.geoclueLog.suffix(2000))")
        let deadline = ContinuousClock.now + .seconds(40)
        waitUntil(within: max(.zero, deadline - ContinuousClock.now)) { Self.events(daemon.stdout).filter({ !$0.hasPrefix("location") }).count >= expected.count }
        #expect(daemon.stop() == 0)
        #expect(Self.events(daemon.stdout).filter { !$0.hasPrefix("location") } == expected, "\(daemon.stderr.suffix(3000))")
    }

    @Test func cityLevelAnswersJitterWithoutFlappingAndGeoClueRestartsAreFollowed() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try dir.write("city.yaml", """
            version: 1
            name: geoclue-city
            mode: significant-change
            sources:
              coarse: {plugin: geoclue, accuracy: city}
            significant_change: {distance: 20km, min_interval: 1s}
            transitions: {hysteresis: 200m, confirm: 1, initial: report}
            fences:
              - {id: ljubljana, name: Ljubljana, circle: {lat: 46.0569, lon: 14.5058, radius: 20km}}

            """)
        // GeoClue shifts city-level answers by 1-2 km on purpose ([wifi] enable=true).
        let geoclue = try GeoClueHarness(answer: (46.0569, 14.5058, 5000), scramble: true)
        try geoclue.startAgent()
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("c.db"), "--print-events", "--log-level", "info"], in: dir, environment: geoclue.environment)
        // Five answers: Ljubljana jittered by up to 1 km three times, then Maribor (100 km) twice.
        // GeoClue caches an answer per process: each round is a new GeoClue (a crash and a
        // restart), which geomon must follow with a new client.
        let rounds: [(Double, Double)] = [(46.0569, 14.5058), (46.0620, 14.4990), (46.0510, 14.5120), (46.5547, 15.6459), (46.5600, 15.6400)]
        for (round, answer) in rounds.enumerated() {
            if round > 0 {
                try geoclue.setAnswer(lat: answer.0, lon: answer.1, accuracy: 5000)
                try geoclue.restartGeoClue()
            }
            let started = round + 1
            #expect(Self.wait { daemon.stderr.components(separatedBy: "GeoClue started").count - 1 >= started },
                    "round \(round): \(daemon.stderr.suffix(2000))")
            #expect(Self.wait { geoclue.stubLog.components(separatedBy: "answered").count - 1 >= 1 })
            // A fixed wait: the daemon takes the answer from D-Bus and decides it before GeoClue
            // is restarted; a jittered answer that changes nothing leaves no line or row to
            // wait for.
            Thread.sleep(forTimeInterval: 1.5)
        }
        #expect(daemon.stop() == 0)
        let events = Self.events(daemon.stdout)
        // Entered once (reported at the first fix), left once at the real move; location
        // events only for the first fix and the 100 km move.
        #expect(events.filter { $0.hasPrefix("enter") || $0.hasPrefix("exit") } == ["enter ljubljana", "exit ljubljana"], "\(events)\n\(daemon.stderr.suffix(3000))")
        #expect(events.filter { $0.hasPrefix("location") }.count == 2, "\(events)")
        // A restart is a warning, once per restart, and never an error.
        #expect(daemon.stderr.components(separatedBy: "GeoClue left the bus").count - 1 == rounds.count - 1)
    }

    /// The D-Bus connection itself fails (dbus-daemon restarted): geomon connects again at its
    /// retry and asks the new GeoClue for a client; the coarse source does not stay dead.
    @Test func aRestartedSystemBusIsConnectedAgain() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try dir.write("city.yaml", """
            version: 1
            name: geoclue-bus
            mode: significant-change
            sources:
              coarse: {plugin: geoclue, accuracy: city}
            significant_change: {distance: 20km, min_interval: 1s}
            fences:
              - {id: ljubljana, name: Ljubljana, circle: {lat: 46.0569, lon: 14.5058, radius: 20km}}

            """)
        let geoclue = try GeoClueHarness(answer: (46.0569, 14.5058, 5000))
        try geoclue.startAgent()
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("c.db"), "--log-level", "info"], in: dir, environment: geoclue.environment)
        #expect(Self.wait { daemon.stderr.contains("GeoClue started") }, "\(daemon.stderr.suffix(2000))")
        try geoclue.restartBus()
        try geoclue.startAgent()
        #expect(Self.wait { daemon.stderr.contains("the D-Bus connection failed") }, "\(daemon.stderr.suffix(2000))")
        #expect(Self.wait(timeout: .seconds(30)) { daemon.stderr.components(separatedBy: "GeoClue started").count - 1 >= 2 },
                "\(daemon.stderr.suffix(3000))")
        #expect(daemon.stop() == 0)
    }

    @Test func withoutAnAgentTheLogSaysWhatToDoAndGeomonsOwnAgentWorks() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let geoclue = try GeoClueHarness()
        func profile(agent: Bool) throws -> String {
            try dir.write("agent-\(agent).yaml", """
                version: 1
                name: geoclue-agent
                mode: significant-change
                sources:
                  coarse: {plugin: geoclue, accuracy: city, agent: \(agent)}
                fences:
                  - {id: ljubljana, circle: {lat: 46.0569, lon: 14.5058, radius: 20km}}

                """)
        }
        let waiting = try Daemon(["--profile", try profile(agent: false), "--db", dir.path("a.db"), "--log-level", "info"], in: dir, environment: geoclue.environment)
        #expect(waiting.waitForLog("authorization agent", timeout: 20), "\(waiting.stderr)")
        #expect(waiting.stderr.contains("/usr/libexec/geoclue-2.0/demos/agent") && waiting.stderr.contains("agent: true"))
        #expect(waiting.stop() == 0)

        // geomon as its own agent ("geomon" is in the test's [agent] whitelist).
        let own = try Daemon(["--profile", try profile(agent: true), "--db", dir.path("b.db"), "--print-events", "--log-level", "info"], in: dir, environment: geoclue.environment)
        #expect(own.waitForLog("GeoClue started", timeout: 20), "\(own.stderr)")
        #expect(Self.wait { !own.stdout.isEmpty }, "the first fix gives a location event")
        #expect(own.stop() == 0)
    }

    static func wait(timeout: Duration = .seconds(20), _ condition: () -> Bool) -> Bool {
        waitUntil(within: timeout, every: .milliseconds(100), condition)
    }

    /// GeoClue's unknown values become geomon's: never a perfect fix, never a negative speed.
    @Test func unknownValuesMapToGeomonsConventions() throws {
        let nmea = try #require(GeoClueSource.fix(latitude: 46.1, longitude: 14.5, accuracy: 0, speed: -1, heading: -1, seconds: 1_796_133_050, micros: 250_000, level: .exact))
        #expect(nmea.horizontalAccuracyMeters == 30 && nmea.speedMetersPerSecond == nil && nmea.courseDegrees == nil)
        #expect(nmea.time.millisecondsSince1970 == 1_796_133_050_250 && nmea.source == .coarse)
        let city = try #require(GeoClueSource.fix(latitude: 46.1, longitude: 14.5, accuracy: -1, speed: 0.77, heading: 0, seconds: 1, micros: 0, level: .city))
        #expect(city.horizontalAccuracyMeters == 6000 && city.speedMetersPerSecond == 0.77 && city.courseDegrees == 0)
        let reported = try #require(GeoClueSource.fix(latitude: 46.1, longitude: 14.5, accuracy: 8000, speed: nil, heading: nil, seconds: 1, micros: 0, level: .city))
        #expect(reported.horizontalAccuracyMeters == 8000)
        #expect(GeoClueSource.fix(latitude: .nan, longitude: 14.5, accuracy: 5, speed: nil, heading: nil, seconds: 1, micros: 0, level: .city) == nil)
        #expect(GeoClueSource.fix(latitude: 91, longitude: 14.5, accuracy: 5, speed: nil, heading: nil, seconds: 1, micros: 0, level: .city) == nil)
        #expect(GeoClueSource.fix(latitude: 46, longitude: 14.5, accuracy: 5, speed: nil, heading: nil, seconds: nil, micros: 0, level: .city) == nil)
    }
}

/// GeoClue's client without a bus to reach: no GeoClue needed.
struct GeoClueReconnectTests {
    /// A bus that is not there: the first failure is thrown to the caller, and each retry
    /// after it waits twice as long as the one before (5 s, 10 s, 20 s, 40 s), each failure
    /// counted once.
    @Test func retriesWithoutABusBackOffByDoubling() throws {
        var settings = GeoClueSource.Settings()
        settings.busAddress = "unix:path=/nonexistent/geomon-test-bus"
        let source = GeoClueSource(settings: settings)
        #expect(throws: GeoClueError.self) { try source.start() }
        var retries: [Duration] = []
        for _ in 0..<3 {
            let due = try #require(source.timeoutMicroseconds)
            for event in source.process(nowMicroseconds: due) {
                if case let .failed(reason, _, retryIn) = event {
                    #expect(reason.hasPrefix("cannot connect to the D-Bus system bus"))
                    retries.append(retryIn)
                }
            }
        }
        #expect(retries == [.seconds(10), .seconds(20), .seconds(40)])
        source.stop()
    }
}
