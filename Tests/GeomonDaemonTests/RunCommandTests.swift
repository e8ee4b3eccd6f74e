import Foundation
import GeomonCore
import GeomonSources
import GeomonStore
import GeomonTestSupport
import Testing

/// `geomon run` as a child process against a real gpsd fed by gpsfake with a recorded log.
@Suite(.serialized, .enabled(if: GPSFakeHarness.shouldRun), .timeLimit(.minutes(3)))
struct RunCommandTests {
    /// gpsd 3.22 moves NMEA times before 2017 forward by 1024 weeks.
    static let weekRolloverSeconds: Int64 = 619_315_200
    static let shortSwiss = TestSupport.fixture("tracks/genivi_20100403_Z205_Switzerland_short.nmea")

    /// A running `geomon run`, its output in files.
    final class Daemon {
        let process = Process()
        let stdoutURL: URL
        let stderrURL: URL

        /// - Parameter wrapper: a program (and its arguments) that runs `geomon run ARGS` by
        ///   exec, e.g. in a private namespace; the process is then geomon itself.
        init(_ arguments: [String], in dir: TemporaryDirectory, environment: [String: String]? = nil, wrapper: [String] = []) throws {
            stdoutURL = dir.url.appendingPathComponent("run-\(UUID().uuidString).out")
            stderrURL = dir.url.appendingPathComponent("run-\(UUID().uuidString).err")
            _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
            _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
            if let program = wrapper.first {
                process.executableURL = URL(fileURLWithPath: program)
                process.arguments = Array(wrapper.dropFirst()) + [TestSupport.geomonBinary.path, "run"] + arguments
            } else {
                process.executableURL = TestSupport.geomonBinary
                process.arguments = ["run"] + arguments
            }
            process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
            process.standardError = try FileHandle(forWritingTo: stderrURL)
            process.standardInput = FileHandle.nullDevice
            if let environment { process.environment = environment }
            try process.run()
        }

        var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
        var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

        func signal(_ signo: Int32) { kill(process.processIdentifier, signo) }

        /// Waits until `predicate` holds on stderr (polling), or the timeout passes.
        @discardableResult
        func waitForLog(_ text: String, timeout: Double = 30) -> Bool {
            waitUntil(within: .milliseconds(Int64(timeout * 1000)), every: .milliseconds(50)) { stderr.contains(text) || !process.isRunning }
            return stderr.contains(text)
        }

        /// SIGTERM and wait; returns the exit status.
        func stop(timeout: Double = 10) -> Int32? {
            signal(SIGTERM)
            waitUntil(within: .milliseconds(Int64(timeout * 1000))) { !process.isRunning }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                return nil
            }
            return process.terminationStatus
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    /// A copy of the shipped profiles directory (hooks, GeoJSON) in a temp dir.
    static func profileCopy(_ dir: TemporaryDirectory) throws -> String {
        let source = TestSupport.packageRoot.appendingPathComponent("profiles")
        let target = dir.url.appendingPathComponent("profiles")
        try FileManager.default.copyItem(at: source, to: target)
        return target.appendingPathComponent("geofence-only.yaml").path
    }

    struct EventKey: Hashable, CustomStringConvertible {
        var type: String
        var fence: String
        var time: Int64
        var description: String { "\(type) \(fence) @\(time)" }
    }

    static func events(_ jsonLines: String, shift: Int64 = 0) throws -> [EventKey] {
        try jsonLines.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
            let time = (object["time"] as? String).flatMap(Self.parseTime) ?? -1
            return EventKey(type: object["type"] as? String ?? "?", fence: object["fence"] as? String ?? "-", time: time - shift)
        }
    }

    static func parseTime(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        return formatter.date(from: text).map { Int64($0.timeIntervalSince1970) }
    }

    /// The events `geomon replay` decides for the same log, with the same profile. Both sides
    /// keep the receiver on, so both see every fix (the power policy has its own tests).
    static func replayEvents(profile: String, log: URL, dir: TemporaryDirectory) throws -> [EventKey] {
        let result = try runGeomon(["replay", "--profile", profile, log.path, "--format", "json", "--no-hooks", "--always-on", "--db", dir.path("replay-\(UUID().uuidString).db")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        return try events(result.stdout)
    }

    @Test func runOnGpsdDecidesTheSameEventsAsReplayOfTheLog() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profileCopy(dir)
        // The profile's hook, replaced by one that records what it was given.
        let hookLog = dir.path("hook.log")
        _ = try dir.write("profiles/hooks/notify.sh", "#!/bin/sh\nprintf '%s %s %s\\n' \"$GEOMON_EVENT\" \"$GEOMON_FENCE\" \"$GEOMON_EVENT_ID\" >> '\(hookLog)'\n", mode: 0o755)
        let gpsd = try GPSFakeHarness(log: Self.shortSwiss, cycleSeconds: 0.01, lingerSeconds: 2)
        defer { gpsd.stop() }
        let db = dir.path("run.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(gpsd.port)", "--print-events", "--always-on", "--log-level", "info"], in: dir)
        #expect(gpsd.waitForExit(timeout: .seconds(90)))
        #expect(daemon.waitForLog("gpsd disconnected"))
        #expect(daemon.stop() == 0, "\(daemon.stderr)")

        let live = try Self.events(daemon.stdout, shift: Self.weekRolloverSeconds)
        let replayed = try Self.replayEvents(profile: profile, log: Self.shortSwiss, dir: dir)
        #expect(!replayed.isEmpty)
        // gpsd drops what it read before geomon connected; compare from 60 s into the log on.
        let start = replayed.map(\.time).min()! - 3600
        let firstLive = live.map(\.time).min() ?? .max
        let comparable = replayed.filter { $0.time > max(start, firstLive - 1) }
        #expect(live == comparable, "live: \(live)\nreplay: \(replayed)")
        #expect(live.count >= 4)

        // Every event reached the hook, once, with the id it was printed with (hooks for
        // different fences may run concurrently; per fence they run in order).
        let printedIDs = try daemon.stdout.split(separator: "\n").map { line in
            (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String ?? "?"
        }
        let hookLines = ((try? String(contentsOfFile: hookLog, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(hookLines.map { String($0.split(separator: " ").last ?? "") }.sorted() == printedIDs.sorted(), "\(hookLines)")

        // State is committed: status sees the last fix and the daemon as stopped.
        let status = try runGeomon(["status", "--db", db, "--format", "json"])
        #expect(status.exitCode == 0)
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let daemonStatus = object?["daemon"] as? [String: Any]
        #expect(daemonStatus?["running"] as? Bool == false)
        #expect(object?["last_fix"] is [String: Any])
        #expect(object?["events"] as? Int == live.count)
        // The text says the same: gpsd's state, the fences inside, uptime and wake-ups, as of
        // when the daemon last ran.
        let text = try runGeomon(["status", "--db", db]).stdout.split(separator: "\n").map(String.init)
        let gpsdStatus = try #require(daemonStatus?["gpsd"] as? [String: Any])
        #expect(text.contains("gnss:               gpsd \(gpsdStatus["endpoint"] as? String ?? "?"), \(gpsdStatus["state"] as? String ?? "?") (when it last ran)"), "\(text)")
        let inside = daemonStatus?["inside"] as? [String] ?? []
        #expect(text.contains("inside:             \(inside.isEmpty ? "no fence" : inside.joined(separator: ", ")) (when it last ran)"), "\(text)")
        #expect(text.contains("uptime:             \(daemonStatus?["uptime_s"] as? Int ?? -1) s, \(daemonStatus?["loop_wakeups"] as? Int ?? -1) loop wake-ups (when it last ran)"), "\(text)")
    }

    /// The movement rules, a speed limit and a cooldown decide in `run` on a real gpsd what
    /// `replay` decides on the same log (motion, trip, visit, fence and speeding events at the
    /// same fix times), and the hooks get the figures.
    @Test func runOnGpsdDecidesTheSameMovementEventsAsReplay() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (hook, hookLog) = try dir.recordingHook("hook", ["GEOMON_EVENT", "GEOMON_DISTANCE_M", "GEOMON_DURATION_S"])
        let profile = try dir.write("movement.yaml", """
            version: 1
            name: movement
            mode: continuous
            sources:
              gnss: {plugin: gpsd}
            movement:
              motion: true
              confirm: 10s
              trips: {stop_after: 1m}
              visits: {radius: 50m, min_duration: 1m}
            fences:
              - id: town
                circle: {lat: 46.3150, lon: 6.9385, radius: 300m}
                speed_limit: {limit: 20km/h, for: 5s}
                cooldown: 10m
            hooks:
              trip_end: [{exec: [\(hook)]}]
              departure: [{exec: [\(hook)]}]
            """)
        let gpsd = try GPSFakeHarness(log: Self.shortSwiss, cycleSeconds: 0.01, lingerSeconds: 2)
        defer { gpsd.stop() }
        let db = dir.path("run.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(gpsd.port)", "--print-events", "--always-on"], in: dir)
        #expect(gpsd.waitForExit(timeout: .seconds(90)))
        #expect(daemon.waitForLog("gpsd disconnected"))
        #expect(daemon.stop() == 0, "\(daemon.stderr)")

        let live = try Self.events(daemon.stdout, shift: Self.weekRolloverSeconds)
        let replayed = try Self.replayEvents(profile: profile, log: Self.shortSwiss, dir: dir)
        // The log's second half holds a departure, a trip and its end, and an arrival.
        for kind in ["departure", "trip_start", "trip_end", "arrival", "overspeed", "overspeed_end"] {
            #expect(replayed.contains { $0.type == kind }, "no \(kind): \(replayed)")
        }
        // gpsd drops what it read before geomon connected, so the first stand differs: compare
        // from the departure that ends it on.
        let liveTail = live.drop { $0.type != "departure" }
        let replayTail = replayed.drop { $0.type != "departure" }
        #expect(liveTail.count >= 5)
        #expect(Array(liveTail) == Array(replayTail), "live: \(live)\nreplay: \(replayed)")
        #expect(live.contains { $0.type == "trip_end" })
        let hookLines = ((try? String(contentsOfFile: hookLog, encoding: .utf8)) ?? "").split(separator: "\n")
        let tripEnds = hookLines.filter { $0.hasPrefix("trip_end ") }
        #expect(tripEnds.count == live.filter { $0.type == "trip_end" }.count, "\(hookLines)")
        #expect(tripEnds.allSatisfy { ($0.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) > 100 }, "\(hookLines)")
    }

    /// The anchor watch: `geomon fences here` places a circle where the running daemon's device
    /// stands; the daemon monitors it at once, and reports the exit when the device drives off
    /// (the recorded car stands for its first minute, then drives).
    @Test func fencesHerePlacesAFenceTheRunningDaemonMonitorsAtOnce() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (hook, alarm) = try dir.recordingHook("alarm", ["GEOMON_EVENT", "GEOMON_FENCE", "GEOMON_INSIDE_S"])
        let profile = try dir.write("boat.yaml", """
            version: 1
            name: boat
            mode: continuous
            sources:
              gnss: {plugin: gpsd}
            hooks:
              exit: [{exec: [\(hook)]}]
            fences:
              - {id: harbour, circle: {lat: 0, lon: 0, radius: 100m}}
            """)
        let gpsd = try GPSFakeHarness(log: Self.shortSwiss, cycleSeconds: 0.1, lingerSeconds: 2)
        defer { gpsd.stop() }
        let db = dir.path("boat.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(gpsd.port)", "--print-events", "--always-on"], in: dir)
        // Once a fix is stored, while the car still stands.
        #expect(waitUntil(within: .seconds(30)) { (try? runGeomon(["status", "--db", db, "--format", "json"]).stdout.contains("\"last_fix\":{")) == true })
        // The id of a profile fence would hide the placed one: refused.
        let taken = try runGeomon(["fences", "here", "harbour", "--db", db])
        #expect(taken.exitCode == 65 && taken.stderr.contains("'harbour' is the id of a fence of the profile the run watches"), "\(taken.stderr)")
        let placed = try runGeomon(["fences", "here", "anchor", "--radius", "40m", "--db", db])
        #expect(placed.exitCode == 0, "\(placed.stderr)")
        #expect(placed.stdout.contains("placed anchor: a 40 m circle at 46.3156"), "\(placed.stdout)")
        #expect(placed.stdout.contains("asked the running geomon (pid"), "\(placed.stdout)")
        #expect(daemon.waitForLog("profile reloaded"))
        let listed = try runGeomon(["fences", "--profile", profile, "--db", db])
        #expect(listed.stdout.contains("anchor") && listed.stdout.contains("by geomon fences here"), "\(listed.stdout)")
        // The car drives off: the anchor's exit, to the hook, with the time inside.
        #expect(waitUntil(within: .seconds(90)) { ((try? String(contentsOfFile: alarm, encoding: .utf8)) ?? "").hasPrefix("exit anchor ") }, "\(daemon.stdout)")
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
        // The placed fence is a new fence around the device: its enter (the anchor is set),
        // then the exit.
        let events = try Self.events(daemon.stdout)
        #expect(events.map { "\($0.type) \($0.fence)" } == ["enter anchor", "exit anchor"], "\(daemon.stdout)")
        // Removed: stored no more, and a second removal says so.
        #expect(try runGeomon(["fences", "remove", "anchor", "--db", db]).stdout.contains("removed anchor"))
        let again = try runGeomon(["fences", "remove", "anchor", "--db", db])
        #expect(again.exitCode == 66 && again.stderr.contains("no placed fence 'anchor'"), "\(again.stderr)")
    }

    /// The power actions a run logged (`power.action=…`) or a replay's policy log lists, without
    /// `wake-at` lines (their times are on either side's time base; the sleeps carry the same).
    /// A regions profile for a run on a paced gpsd that replay can match fix for fix: TTFFs 0,
    /// `min_sleep` 5.5 s (wakes between the log's whole-second epochs), 60 m circles every
    /// 100 m along `fixes`; `sources` lines beside `gnss` (indented as under `sources:`).
    static func pacedPolicyProfile(_ name: String, fixes: [Fix], sources: String = "", in dir: TemporaryDirectory) throws -> String {
        var yaml = """
            version: 1
            name: \(name)
            mode: regions
            sources:
              gnss: {plugin: gpsd}
            \(sources)policy:
              max_speed: 10m/s
              wake_margin: 10m
              min_sleep: 5.5s
              max_sleep: 10m
              receiver: {ttff_hot: 0s, ttff_warm: 0s}
            fences:

            """
        for (i, shape) in PowerTracks.fences(along: fixes, spacingMeters: 100, radiusMeters: 60).enumerated() {
            guard case let .circle(center: center, radiusMeters: radius) = shape else { continue }
            yaml += "  - {id: f\(i), circle: {lat: \(center.latitude), lon: \(center.longitude), radius: \(Int(radius))m}}\n"
        }
        return try dir.write("\(name).yaml", yaml)
    }

    static func switches(_ text: String, logged: Bool) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            var action: Substring
            if logged {
                guard let r = line.range(of: "power.action=") else { return nil }
                action = line[r.upperBound...]
                if action.hasPrefix("\"") { action = action.dropFirst().prefix { $0 != "\"" } }
            } else {
                guard let space = line.firstIndex(of: " ") else { return nil }
                action = line[line.index(after: space)...]
            }
            return action.hasPrefix("gnss-on") || action.hasPrefix("gnss-off") ? String(action) : nil
        }
    }

    /// With the power policy on, `geomon run` on a real gpsd fed at the recording's own pace
    /// decides the same events at the same fix times, and switches the receiver on and off
    /// alike, as `geomon replay` of the same log. The profile sets both TTFFs to 0 and replay
    /// bridges no gap, so gpsd's next epoch after a wake and the receiver model's first fix are
    /// the same recorded fix. (`min_sleep` 5.5 s puts the clamped wakes between the log's
    /// whole-second epochs: a wake at the very instant of an epoch races gpsd's broadcast.)
    @Test func runWithThePolicyOnDecidesWhatReplayDecides() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let gpsd = try PacedGPSD(log: Self.shortSwiss, seconds: 100)
        defer { gpsd.stop() }
        let log = dir.url.appendingPathComponent("served.nmea")
        try gpsd.writeServedLog(to: log)
        let fixes = try TrackReader.read(path: log.path).fixes
        let profile = try Self.pacedPolicyProfile("policy-live", fixes: fixes, in: dir)
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(gpsd.port)",
                                 "--print-events", "--log-level", "info"], in: dir)
        // The receiver's watch is on before the recording starts.
        #expect(daemon.waitForLog("power.action=\"gnss-on"))
        gpsd.start()
        waitUntil(within: .seconds(gpsd.duration + 30), every: .milliseconds(100)) { gpsd.finished }
        // A fixed wait after the recording: the daemon takes gpsd's last epoch up to an epoch
        // budget later, or not at all when the policy has the receiver off, so no line marks
        // that it is done.
        Thread.sleep(forTimeInterval: 1.5)
        #expect(daemon.stop() == 0, "\(daemon.stderr)")

        let replayLog = dir.path("policy.log")
        let result = try runGeomon(["replay", "--profile", profile, log.path, "--format", "json", "--no-hooks",
                                    "--interpolate-gaps", "0", "--policy-log", replayLog])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let replayed = try Self.events(result.stdout)
        let live = try Self.events(daemon.stdout, shift: Self.weekRolloverSeconds)
        #expect(replayed.count >= 2)
        #expect(live == replayed, "live: \(live)\nreplay: \(replayed)")
        let replaySwitches = Self.switches(try String(contentsOfFile: replayLog, encoding: .utf8), logged: false)
        let liveSwitches = Self.switches(daemon.stderr, logged: true)
        #expect(replaySwitches.contains { $0.hasPrefix("gnss-off") }, "the policy never slept: \(replaySwitches)")
        // The database holds one time base, the receiver's (gpsd's 2029 dates, not this
        // machine's clock): its receiver log lies within its fixes, start record included,
        // and a wake at most `max_sleep` (10 min) after the last of them.
        let store = try EventStore(path: dir.path("run.db"), readOnly: true)
        var first: UTCTime?, last: UTCTime?
        try store.fixLog.forEach { fix in
            if first == nil { first = fix.time }
            last = fix.time
        }
        let stored = try store.receiverSwitchLog.all()
        let span = (try #require(first) - .seconds(5))...(try #require(last) + .seconds(600))
        #expect(stored.count == liveSwitches.count)
        #expect(stored.allSatisfy { span.contains($0.time) }, "receiver log \(stored.first.map(\.time.rfc3339) ?? "-") … outside the fixes' \(span)")
        // Replay stops at the recording's last fix; the daemon runs on for the wait after it,
        // and a wake the policy planned falls due there or not: up to that fix, the same.
        let end = try #require(fixes.last).time + .seconds(Self.weekRolloverSeconds)
        let withinRecording = stored.filter { $0.time <= end }.count
        #expect(Array(liveSwitches.prefix(withinRecording)) == replaySwitches)
        #expect(liveSwitches.count - withinRecording <= 1, "after the recording: \(liveSwitches.dropFirst(withinRecording))")
    }

    /// A gpsd that accepts every connection and closes it at once (a broken socket activation,
    /// a wrong port behind a proxy): one warning, then each retry at `info` only, at the
    /// backoff's growing intervals; `connected` at `notice` only for a connection that reports.
    /// A listener that accepts and closes at once; `greeting`: after sending gpsd's VERSION
    /// banner, as gpsd does on every accept.
    @Test(arguments: [false, true])
    func aGpsdThatAcceptsAndClosesIsOneWarningNotTwoLinesPerRetry(greeting: Bool) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profileCopy(dir)
        let port = try GPSFakeHarness.freePort()
        let banner = #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#
        let script = try dir.write("accept-close.py", """
            import socket, sys
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", int(sys.argv[1])))
            s.listen(16)
            while True:
                c, _ = s.accept()
                if sys.argv[2] == "1":
                    c.sendall(b'\(banner)\\r\\n')
                c.close()
            """)
        let server = try SpawnedProcess(["/usr/bin/python3", script, "\(port)", greeting ? "1" : "0"])
        defer { server.stop() }
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(port)", "--log-level", "info"], in: dir)
        func count(_ text: String) -> Int { daemon.stderr.components(separatedBy: text).count - 1 }
        #expect(waitUntil(within: .seconds(30), every: .milliseconds(50)) { count("gpsd disconnected again before reporting") >= 3 || !daemon.process.isRunning })
        let log = daemon.stderr
        #expect(daemon.stop() == 0)
        let lines = log.split(separator: "\n").filter { $0.contains("gpsd ") }
        // One warning: "disconnected", or "unavailable" had the daemon come before the listener.
        #expect(lines.filter { $0.contains(" warning gpsd ") }.count == 1, "\(log)")
        #expect(lines.filter { $0.contains(" notice ") }.count <= 1, "\(log)")
        #expect(lines.filter { $0.contains(" info gpsd disconnected again before reporting") }.count >= 3, "\(log)")
    }

    @Test func gpsdKilledAndRestartedMidRunIsReconnectedAndNothingIsLost() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profileCopy(dir)
        // Split the log at an RMC sentence near the middle: the first half, then the second.
        let text = try String(contentsOf: Self.shortSwiss, encoding: .isoLatin1)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var cut = lines.count / 2
        while cut < lines.count, !lines[cut].hasPrefix("$GPRMC") { cut += 1 }
        let first = try dir.write("first.nmea", lines[..<cut].joined(separator: "\n") + "\n")
        let second = try dir.write("second.nmea", lines[cut...].joined(separator: "\n"))

        let port = try GPSFakeHarness.freePort()
        var gpsd: GPSFakeHarness? = try GPSFakeHarness(log: URL(fileURLWithPath: first), port: port, cycleSeconds: 0.01, lingerSeconds: 1)
        let db = dir.path("run.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(port)", "--print-events", "--always-on", "--log-level", "info"], in: dir)
        #expect(gpsd?.waitForExit(timeout: .seconds(60)) == true)
        gpsd?.stop()
        #expect(daemon.waitForLog("gpsd disconnected"))
        gpsd = nil
        // gpsd comes back on the same port with the rest of the log.
        let again = try GPSFakeHarness(log: URL(fileURLWithPath: second), port: port, cycleSeconds: 0.01, lingerSeconds: 1)
        defer { again.stop() }
        #expect(again.waitForExit(timeout: .seconds(60)))
        let connects = daemon.stderr.components(separatedBy: " notice gpsd connected").count - 1
        #expect(daemon.stop() == 0)
        // Announced at `notice` again once the restarted gpsd reports.
        #expect(connects >= 2, "\(daemon.stderr)")
        #expect(daemon.process.isRunning == false)

        let live = try Self.events(daemon.stdout, shift: Self.weekRolloverSeconds)
        let replayed = try Self.replayEvents(profile: profile, log: Self.shortSwiss, dir: dir)
        // Every event replay decides after the first live one was also decided live, once.
        let firstLive = live.map(\.time).min() ?? .max
        #expect(Set(live).count == live.count)
        #expect(live == replayed.filter { $0.time >= firstLive }, "live: \(live)\nreplay: \(replayed)")
    }

    /// `geomon run` with `publish.mqtt` on a real mosquitto: every event the daemon prints
    /// reaches the broker as a transition, in order; `geomon status` shows the connection and
    /// nothing pending; a SIGTERM leaves the offline status retained.
    @Test(.enabled(if: MosquittoBroker.shouldRun, "mosquitto not installed"))
    func runPublishesItsTransitionsAndStatusShowsTheConnection() throws {
        let broker = try MosquittoBroker()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profileCopy(dir)
        _ = try dir.write("profiles/mqtt.secret", "s3cret\n", mode: 0o600)
        let text = try String(contentsOfFile: profile, encoding: .utf8)
        _ = try dir.write("profiles/geofence-only.yaml", text + """

            publish:
              mqtt: {host: 127.0.0.1, port: \(broker.port), username: geomon, password_file: mqtt.secret, topic: owntracks/geomon/live, tracker_id: gl}

            """)
        let recorder = try broker.subscribe("owntracks/geomon/live/#")
        let gpsd = try GPSFakeHarness(log: Self.shortSwiss, cycleSeconds: 0.01, lingerSeconds: 1)
        defer { gpsd.stop() }
        let db = dir.path("run.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(gpsd.port)", "--print-events", "--always-on", "--log-level", "info"], in: dir)
        #expect(daemon.waitForLog("MQTT connected"), "\(daemon.stderr)")
        #expect(gpsd.waitForExit(timeout: .seconds(90)))
        let printed = try Self.events(daemon.stdout).filter { $0.type == "enter" || $0.type == "exit" }
        #expect(!printed.isEmpty)
        let messages = recorder.wait { $0.filter { $0.topic.hasSuffix("/event") }.count >= printed.count }
        let received = messages.filter { $0.topic == "owntracks/geomon/live/event" }.compactMap { message -> EventKey? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any],
                  let event = o["event"] as? String, let rid = o["rid"] as? String, let tst = o["tst"] as? Int else { return nil }
            return EventKey(type: event == "leave" ? "exit" : event, fence: rid, time: Int64(tst))
        }
        #expect(received == printed, "published: \(received)\nprinted: \(printed)")
        // The status: connected, nothing pending (commits are flushed within a second).
        var status: [String: Any] = [:]
        try waitUntil(within: .seconds(10), every: .milliseconds(200)) {
            let result = try runGeomon(["status", "--db", db, "--format", "json"])
            status = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
            return status["pending_messages"] as? Int == 0
        }
        #expect(status["pending_messages"] as? Int == 0)
        let mqtt = try #require((status["daemon"] as? [String: Any])?["mqtt"] as? [String: Any], "\(status)")
        #expect(mqtt["state"] as? String == "connected")
        #expect(mqtt["pending"] as? Int == 0)
        #expect(mqtt["broker"] as? String == "127.0.0.1:\(broker.port)")
        #expect(daemon.stop() == 0)
        #expect(try broker.retained("owntracks/geomon/live/status")?.hasPrefix("{\"_type\":\"lwt\"") == true)
        #expect(try broker.retained("owntracks/geomon/live/waypoints")?.contains("martigny-north") == true)
    }

    /// Continuous mode on a real gpsd whose fixes stop (the log ends; gpsd lingers 8 s): far from
    /// every fence the receiver is switched off and retried after 1 s, then 2 s (min_sleep 1 s,
    /// doubling); with the car parked inside a 30 m circle, whose boundary it could reach within
    /// the 2 s fix timeout, it stays on and waits. (`validate` warns that 30 m is below the default
    /// min_accuracy of 50 m; gpsd reports eph 17.1 m at the end of this log, so the fixes are
    /// certain inside: −30 ≤ −(17.1 + 10).)
    @Test(arguments: [("far", false), ("parking", true)])
    func continuousOutageOnGpsdBacksOffOnlyFarFromEveryFence(fence: String, waits: Bool) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // The far circle is ~110 km away; the parking one is centred on the log's last fix.
        let circle = fence == "far" ? "{lat: 47.0, lon: 8.0, radius: 100m}" : "{lat: 46.3142217, lon: 6.9410083, radius: 30m}"
        let profile = try dir.write("continuous.yaml", """
            version: 1
            name: continuous-live
            mode: continuous
            sources:
              gnss: {plugin: gpsd}
            policy:
              fix_timeout: 2s
              min_sleep: 1s
              max_sleep: 8s
              receiver: {ttff_hot: 1s}
            fences:
              - id: \(fence)
                circle: \(circle)
            """)
        let gpsd = try GPSFakeHarness(log: Self.shortSwiss, cycleSeconds: 0.01, lingerSeconds: 8)
        defer { gpsd.stop() }
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(gpsd.port)",
                                 "--print-events", "--log-level", "info"], in: dir)
        #expect(gpsd.waitForExit(timeout: .seconds(90)))
        #expect(daemon.waitForLog("gpsd disconnected"))
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
        let log = daemon.stderr
        if waits {
            #expect(!log.contains("gnss-off"), "\(log)")
            let events = try Self.events(daemon.stdout)
            #expect(events.map(\.type) == ["enter"] && events.map(\.fence) == ["parking"], "\(events)")
        } else {
            let first = try #require(log.range(of: "gnss-off fix-timeout sleep=1.0s"), "\(log)")
            let retry = try #require(log.range(of: "gnss-on retry ttff=1s", range: first.upperBound..<log.endIndex))
            #expect(log.range(of: "gnss-off fix-timeout sleep=2.0s", range: retry.upperBound..<log.endIndex) != nil, "\(log)")
        }
    }

    @Test func sighupWithABrokenProfileKeepsTheRunningOneAndAValidOneIsLoaded() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profileCopy(dir)
        let original = try String(contentsOfFile: profile, encoding: .utf8)
        let port = try GPSFakeHarness.freePort() // nothing listens: gpsd is away, geomon retries
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(port)"], in: dir)
        #expect(daemon.waitForLog("geomon started"))
        try (original + "\nbogus_key: [unterminated\n").write(toFile: profile, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(daemon.waitForLog("reload failed; keeping the running profile"))
        #expect(daemon.process.isRunning)
        #expect(daemon.stderr.contains("geofence-only.yaml:"), "diagnostics name the file: \(daemon.stderr)")
        try original.write(toFile: profile, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(daemon.waitForLog("profile reloaded"))
        #expect(daemon.stop() == 0)
    }

    /// Another writer holding the database past the busy timeout does not stop the daemon:
    /// the commit waits in memory, is tried again, and goes through once the lock is gone.
    @Test func aDatabaseLockedByAnotherWriterDelaysTheCommitAndStopsNothing() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profileCopy(dir)
        let port = try GPSFakeHarness.freePort() // nothing listens: gpsd is away, geomon retries
        let db = dir.path("run.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(port)", "--log-level", "info"], in: dir)
        #expect(daemon.waitForLog("geomon started"))
        let blocker = try Connection(path: db, busyTimeoutMilliseconds: 10_000)
        try blocker.execute("BEGIN IMMEDIATE")
        daemon.signal(SIGHUP) // the reload changes the status: a commit
        #expect(daemon.waitForLog("cannot commit to the database", timeout: 20), "\(daemon.stderr)")
        #expect(daemon.process.isRunning)
        try blocker.execute("COMMIT")
        #expect(daemon.waitForLog("database commits resumed", timeout: 20), "\(daemon.stderr)")
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
    }

    /// `geomon hooks retry` (SIGUSR1) while another writer holds the database past the busy
    /// timeout: the requeue is logged and tried again, as every store write of the loop is, and
    /// stops nothing.
    @Test func aRetryAskedWhileTheDatabaseIsLockedWaitsForItAndStopsNothing() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profileCopy(dir)
        let port = try GPSFakeHarness.freePort()
        let db = dir.path("run.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(port)", "--log-level", "info"], in: dir)
        #expect(daemon.waitForLog("geomon started"))
        let blocker = try Connection(path: db, busyTimeoutMilliseconds: 10_000)
        try blocker.execute("BEGIN IMMEDIATE")
        daemon.signal(SIGUSR1)
        #expect(daemon.waitForLog("hook delivery failed to update the store", timeout: 20), "\(daemon.stderr)")
        #expect(daemon.process.isRunning)
        try blocker.execute("COMMIT")
        #expect(daemon.waitForLog("dead deliveries requeued", timeout: 20), "\(daemon.stderr)")
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
    }

    @Test func aSecondInstanceOnTheSameDatabaseIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profileCopy(dir)
        let port = try GPSFakeHarness.freePort()
        let db = dir.path("run.db")
        let first = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(port)"], in: dir)
        #expect(first.waitForLog("geomon started"))
        let second = try runGeomon(["run", "--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(port)"])
        #expect(second.exitCode == 1)
        #expect(second.stderr.contains("another geomon instance is already running"), "\(second.stderr)")
        #expect(first.stop() == 0)
    }

    @Test func anInvalidProfileExits65WithDiagnosticsAndAMissingOne66() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let bad = try dir.write("bad.yaml", "version: 1\nname: Bad Name\nmode: regions\n")
        let result = try runGeomon(["run", "--profile", bad, "--db", dir.path("x.db")])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("bad.yaml:2:7: error:"), "\(result.stderr)")
        let missing = try runGeomon(["run", "--profile", dir.path("nope.yaml")])
        #expect(missing.exitCode == 66)
        let usage = try runGeomon(["run", "--profile", bad, "--gpsd", "host:notaport"])
        #expect(usage.exitCode == 64)
    }
}
