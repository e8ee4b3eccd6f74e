import Foundation
import GeomonCore
import GeomonDaemon
import GeomonSources
import GeomonStore
import GeomonTestSupport
import Testing

/// `sources.gnss.power`: `geomon run` switches a receiver for real. A simulated receiver on a
/// pseudo-terminal (the one fake: no receiver runs here) plays a recorded drive at its pace
/// to a real gpsd and obeys the commands of its kind; its own account of being on is compared
/// with what the daemon decided and measured.
@Suite(.serialized, .enabled(if: GPSFakeHarness.shouldRun), .timeLimit(.minutes(3)))
struct ReceiverPowerTests {
    typealias Daemon = RunCommandTests.Daemon
    static let log = TestSupport.fixture("tracks/genivi_20100403_Z205_Switzerland_short.nmea")
    /// The car leaves its depot and crosses a junction: the policy sleeps between band wakes.
    static let window = (from: "13:11:40", until: "13:12:35")

    /// The shipped geofence-only profile with `power` set.
    static func profile(_ dir: TemporaryDirectory, power: String) throws -> String {
        let path = try RunCommandTests.profileCopy(dir)
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let anchor = "    min_accuracy: 50m"
        let line = try #require(text.range(of: anchor))
        text.replaceSubrange(line, with: anchor + "\n    power: " + power + "\n   ")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A temporary directory with the profile (`power` from the directory) and a simulated
    /// receiver of kind `obey` read by a real gpsd, for `body`; all removed and stopped after.
    static func scenario(obey: String, ignore: Bool = false, ttff: Double = 1, power: (TemporaryDirectory) throws -> String,
                         _ body: (_ profile: String, _ receiver: SimulatedReceiver, _ dir: TemporaryDirectory) throws -> Void) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try Self.profile(dir, power: power(dir))
        let receiver = try SimulatedReceiver(log: Self.log, directory: dir.url, obey: obey, ignore: ignore, from: Self.window.from, until: Self.window.until, ttff: ttff)
        defer { receiver.stop() }
        try body(profile, receiver, dir)
    }

    /// Runs the daemon over the window with `receiver`; returns it stopped, with the times
    /// (seconds since the first) of the switches it logged before the recording ended.
    static func run(profile: String, receiver: SimulatedReceiver, dir: TemporaryDirectory) throws -> (daemon: Daemon, switches: [(on: Bool, t: Double)], status: [String: Any]) {
        let db = dir.path("run.db")
        let daemon = try Daemon(["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(receiver.port)", "--log-level", "info"], in: dir)
        #expect(daemon.waitForLog("gpsd connected"))
        receiver.play()
        #expect(receiver.waitForEnd(timeout: .seconds(120)))
        let logged = daemon.stderr
        let status = try runGeomon(["status", "--db", db, "--format", "json"])
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let daemonStatus = try #require(object["daemon"] as? [String: Any])
        let gpsd = try #require(daemonStatus["gpsd"] as? [String: Any])
        let power = try #require(gpsd["power"] as? [String: Any])
        var switches: [(on: Bool, t: Double)] = []
        for line in logged.split(separator: "\n") {
            let on = line.contains(" receiver switched on ")
            guard on || line.contains(" receiver switched off ") else { continue }
            let stamp = String(line.prefix(while: { $0 != " " }))
            // The log writes the shortest form: no fraction on a whole second.
            let time = try #require(ISO8601DateFormatter.milliseconds.date(from: stamp) ?? ISO8601DateFormatter().date(from: stamp), "\(line)")
            switches.append((on, time.timeIntervalSince1970))
        }
        return (daemon, switches, power)
    }

    /// Off periods (seconds) of the receiver's own account and of the daemon's log.
    static func offPeriods(_ states: [SimulatedReceiver.State]) -> [Double] {
        zip(states, states.dropFirst()).compactMap { a, b in !a.on && b.on ? b.mono - a.mono : nil }
    }

    static func offPeriods(_ switches: [(on: Bool, t: Double)]) -> [Double] {
        zip(switches, switches.dropFirst()).compactMap { a, b in !a.on && b.on ? b.t - a.t : nil }
    }

    @Test func ubxStopsTheReceiverWhenThePolicySleepsAndItsOwnOffTimeIsThePolicys() throws {
        try Self.scenario(obey: "ubx", power: { _ in "ubx" }) { profile, receiver, dir in
            let (daemon, switches, power) = try Self.run(profile: profile, receiver: receiver, dir: dir)
            let states = receiver.states()
            let receiverOff = Self.offPeriods(states)
            let daemonOff = Self.offPeriods(switches)
            // The receiver stopped and started on UBX-CFG-RST, once per switch of the policy.
            #expect(receiverOff.count >= 2, "\(states)")
            // The daemon's last wake may come after the recording ended (the receiver then says
            // "end", not "on"): one more off period on its side at most.
            #expect(daemonOff.count - receiverOff.count == 0 || daemonOff.count - receiverOff.count == 1, "receiver: \(receiverOff)\ndaemon: \(daemonOff)")
            #expect(states.contains { !$0.on && $0.why == "ubx cfg-rst gnss stop" })
            #expect(states.contains { $0.on && $0.why == "ubx gnss start" })
            // Each off period of the receiver is the policy's, within a second.
            for (r, d) in zip(receiverOff, daemonOff) { #expect(abs(r - d) < 1, "receiver \(r) s, daemon \(d) s") }
            #expect(!daemon.stderr.contains("has no effect"))
            #expect(power["method"] as? String == "ubx")
            // The time it drew current: from each switch on to the switch off, the silence
            // before its first fix and the gaps between reports included; against its own
            // account, within the switch latency through gpsd and a status written each second
            // (docs/power.md, "The measured on-time"). Counting reports alone gave 22–38 % less.
            let measured = try #require(power["measured_on_s"] as? Double)
            let own = receiver.onSeconds()
            #expect(abs(measured - own) <= 2 + 0.05 * own, "measured \(measured) s, receiver on \(own) s")
            try Self.expectReplayDecidesTheSame(profile: profile, receiver: receiver, dir: dir)
        }
    }

    /// The events of the run are those a replay decides from the same drive, started where the
    /// daemon's first fix was (gpsd takes the receiver's first epochs to identify it): the
    /// same kinds and fences, at times within the receiver's start and an epoch (the simulated
    /// receiver starts in 1 s, the replay's model in the profile's `ttff_hot`, 2 s).
    static func expectReplayDecidesTheSame(profile: String, receiver: SimulatedReceiver, dir: TemporaryDirectory) throws {
        let store = try EventStore(path: dir.path("run.db"), readOnly: true)
        var first: UTCTime?
        try store.fixLog.forEach { if first == nil { first = $0.time } }
        // The time of day of the first fix (the dates differ by gpsd's week rollover).
        let firstFix = try #require(first).rfc3339
        let clock = firstFix.dropFirst(11).prefix(8).replacingOccurrences(of: ":", with: "")
        var keep = false
        var lines: [Substring] = []
        for line in try String(contentsOf: receiver.excerpt, encoding: .isoLatin1).split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            if !keep, fields.count > 1, line.hasPrefix("$GPGGA") || line.hasPrefix("$GPRMC"), fields[1].prefix(6) >= clock { keep = true }
            if keep { lines.append(line) }
        }
        #expect(!lines.isEmpty)
        let trimmed = try dir.write("replayed.nmea", lines.joined(separator: "\n") + "\n")
        let replay = try runGeomon(["replay", "--profile", profile, trimmed, "--format", "json", "--no-hooks"])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        let stored = try runGeomon(["events", "--db", dir.path("run.db"), "--format", "json"])
        let live = try RunCommandTests.events(stored.stdout, shift: RunCommandTests.weekRolloverSeconds)
        let replayed = try RunCommandTests.events(replay.stdout)
        #expect(!replayed.isEmpty)
        #expect(live.map { "\($0.type) \($0.fence)" } == replayed.map { "\($0.type) \($0.fence)" }, "live: \(live)\nreplay: \(replayed)")
        for (l, r) in zip(live, replayed) { #expect(abs(l.time - r.time) <= 3, "live: \(live)\nreplay: \(replayed)") }
    }

    @Test func aReceiverThatIgnoresTheSwitchIsSaidOnceAndCountsAsOn() throws {
        try Self.scenario(obey: "ubx", ignore: true, power: { _ in "ubx" }) { profile, receiver, dir in
            let (daemon, switches, power) = try Self.run(profile: profile, receiver: receiver, dir: dir)
            #expect(switches.contains { !$0.on }, "the policy never slept: \(daemon.stderr)")
            #expect(receiver.commands().contains("ubx cfg-rst gnss stop"))
            #expect(Self.offPeriods(receiver.states()).isEmpty, "the receiver was to ignore the commands")
            #expect(daemon.stderr.components(separatedBy: "has no effect").count - 1 == 1, "\(daemon.stderr)")
            #expect(power["state"] as? String == "always on (the switch has no effect)")
            // Its measured on-time is nearly the whole recording, not the policy's wish.
            let measured = try #require(power["measured_on_s"] as? Double)
            #expect(measured >= 0.8 * receiver.onSeconds(), "measured \(measured) s, receiver on \(receiver.onSeconds()) s")
        }
    }

    /// A receiver a run left stopped (killed while it was off) reports nothing, so no report on
    /// the next run's connection names its device: that run wakes it through the device gpsd,
    /// which kept running and knows it, lists.
    @Test func ubxWakesAReceiverLeftStoppedThatNoReportNames() throws {
        try Self.scenario(obey: "ubx", power: { _ in "ubx" }) { profile, receiver, dir in
            // gpsd meets the receiver while it reports, then another client stops it.
            receiver.play()
            #expect(waitUntil(within: .seconds(10)) { (try? receiver.sendThroughGpsd(hex: "").contains("\"driver\"")) == true })
            let stopped = try receiver.sendThroughGpsd(hex: ReceiverCommands.off(.ubx).map { $0.map { String(format: "%02x", $0) }.joined() } ?? "")
            #expect(!stopped.contains("ERROR"), "\(stopped)")
            #expect(waitUntil(within: .seconds(5)) { receiver.states().last.map { !$0.on } == true })
            let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(receiver.port)", "--log-level", "info"], in: dir)
            #expect(waitUntil(within: .seconds(15)) { receiver.states().last.map { $0.on && $0.why == "ubx gnss start" } == true },
                    "\(receiver.states())\n\(daemon.stderr.suffix(2000))")
            #expect(daemon.stop() == 0)
        }
    }

    /// gpsd writes to a receiver only once it has identified it from its reports: to one silent
    /// since gpsd started it answers a `?DEVICE` write with an error. The source reports it
    /// (once), and the daemon says the switch did not reach the receiver, with gpsd's words; once
    /// the receiver has reported, the same write is taken.
    @Test func aSwitchGpsdRefusesIsSaidWithItsReason() throws {
        try Self.scenario(obey: "ubx", power: { _ in "ubx" }) { profile, receiver, dir in
            let on = try #require(ReceiverCommands.on(.ubx))
            let source = GPSDSource(port: String(receiver.port))
            // The source's events until `done` or `timeout`, waiting on its socket as the daemon does.
            func pump(timeout: Duration, until done: ([GPSDSource.Event]) -> Bool) -> [GPSDSource.Event] {
                var events: [GPSDSource.Event] = []
                let deadline = ContinuousClock.now + timeout
                while ContinuousClock.now < deadline, !done(events), let fd = source.fileDescriptor {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&descriptor, 1, 100)
                    events += source.readAvailable()
                }
                return events
            }
            defer { source.disconnect() }
            _ = try source.connect()
            try source.watch(enabled: true)
            _ = pump(timeout: .seconds(10)) { _ in source.listedDevice != nil }
            let device = try #require(source.listedDevice)
            func refusals(within timeout: Duration, stopAtFirst: Bool) throws -> [String] {
                try source.sendToDevice(on, device: device)
                let events = pump(timeout: timeout) { events in stopAtFirst && events.contains { if case .refused = $0 { true } else { false } } }
                return events.compactMap { if case let .refused(message) = $0 { message } else { nil } }
            }
            let refused = try refusals(within: .seconds(10), stopAtFirst: true)
            #expect(refused.count == 1 && refused.first?.contains("is unknown") == true, "\(refused)")

            let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(receiver.port)", "--log-level", "info"], in: dir)
            #expect(daemon.waitForLog("gpsd refused the receiver switch on", timeout: 20), "\(daemon.stderr.suffix(2000))")
            #expect(daemon.stderr.contains("is unknown"), "\(daemon.stderr.suffix(2000))")
            #expect(daemon.stop() == 0)

            receiver.play()
            #expect(waitUntil(within: .seconds(10)) { (try? receiver.sendThroughGpsd(hex: "").contains("\"driver\"")) == true })
            #expect(try refusals(within: .seconds(2), stopAtFirst: false).isEmpty)
        }
    }

    /// The link to gpsd drops while the policy has the receiver stopped, and the wake comes
    /// while it is down (gpsd runs on, as a remote one does behind a network that went away):
    /// the switch on that could not be sent goes once the link is back (the receiver would stay
    /// stopped for good, and a continuous profile, waiting through an outage, blind).
    @Test func aSwitchOnWhileGpsdIsAwayIsSentOnceItIsBack() throws {
        try Self.scenario(obey: "ubx", power: { _ in "ubx" }) { profile, receiver, dir in
            let port = try GPSFakeHarness.freePort()
            let link = try SpawnedProcess(["/usr/bin/python3", TestSupport.packageRoot.appendingPathComponent("scripts/tcp-blip.py").path,
                                           String(port), String(receiver.port)])
            defer { link.stop(signal: SIGTERM, grace: .seconds(3)) }
            #expect(waitUntil(within: .seconds(10)) { GPSFakeHarness.accepts(port: port) })
            let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(port)", "--log-level", "info"], in: dir)
            #expect(daemon.waitForLog("gpsd connected"))
            receiver.play()
            #expect(waitUntil(within: .seconds(40)) { receiver.states().contains { !$0.on && $0.why == "ubx cfg-rst gnss stop" } }, "\(receiver.states())")
            kill(link.pid, SIGUSR1)
            #expect(daemon.waitForLog("cannot switch the receiver on", timeout: 40), "\(daemon.stderr.suffix(2000))")
            kill(link.pid, SIGUSR2)
            #expect(waitUntil(within: .seconds(15)) { receiver.states().last.map { $0.on && $0.why == "ubx gnss start" } == true },
                    "\(receiver.states())\n\(daemon.stderr.suffix(2000))")
            #expect(daemon.stop() == 0)
        }
    }

    @Test func mtkPutsTheReceiverInStandbyAndAnyByteWakesIt() throws {
        try Self.scenario(obey: "mtk", power: { _ in "mtk" }) { profile, receiver, dir in
            let (daemon, switches, _) = try Self.run(profile: profile, receiver: receiver, dir: dir)
            let states = receiver.states()
            let receiverOff = Self.offPeriods(states)
            #expect(receiverOff.count >= 2, "\(states)")
            let daemonOff = Self.offPeriods(switches)
            #expect(daemonOff.count - receiverOff.count == 0 || daemonOff.count - receiverOff.count == 1, "receiver: \(receiverOff)\ndaemon: \(daemonOff)")
            for (r, d) in zip(receiverOff, daemonOff) { #expect(abs(r - d) < 1, "receiver \(r) s, daemon \(d) s") }
            #expect(states.contains { !$0.on && $0.why == "mtk standby" })
            #expect(states.contains { $0.on && $0.why == "uart wake" })
            #expect(!daemon.stderr.contains("has no effect"))
        }
    }

    @Test func commandRunsTheProfilesProgramsOnEachSwitch() throws {
        try Self.scenario(obey: "none", power: { dir in
            let calls = dir.path("calls.log")
            let script = try dir.write("profiles/receiver-power.sh", "#!/bin/sh\necho \"$1\" >> '\(calls)'\n", mode: 0o755)
            return "{method: command, on: [\(script), 'on'], off: [\(script), 'off'], restart: hot}"
        }) { profile, receiver, dir in
            let (daemon, switches, power) = try Self.run(profile: profile, receiver: receiver, dir: dir)
            let lines = ((try? String(contentsOfFile: dir.path("calls.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            // One call per switch the daemon logged: "on" at start (the receiver is powered
            // whatever state it was left in), then off and on as the policy sleeps and wakes.
            let logged = switches.map { $0.on ? "on" : "off" }
            #expect(lines.count >= 3)
            #expect(Array(lines.prefix(logged.count)) == logged, "calls: \(lines)\nlogged: \(logged)")
            #expect(lines.first == "on" && lines.dropFirst().first == "off")
            #expect(power["method"] as? String == "command")
            // A receiver that a command did not switch keeps reporting: said once.
            #expect(daemon.stderr.components(separatedBy: "has no effect").count - 1 == 1)
        }
    }
}

extension ReceiverPowerTests {
    /// An off program that fails leaves the receiver on: each failure is said, and its fixes
    /// are not taken for a method without effect (the receiver was never switched off).
    @Test func aFailedSwitchOffIsNotTakenForAMethodWithoutEffect() throws {
        try Self.scenario(obey: "none", power: { dir in
            let script = try dir.write("profiles/receiver-power.sh", "#!/bin/sh\n[ \"$1\" = on ] || { echo 'relay busy' >&2; exit 1; }\n", mode: 0o755)
            return "{method: command, on: [\(script), 'on'], off: [\(script), 'off'], restart: hot}"
        }) { profile, receiver, dir in
            let (daemon, _, _) = try Self.run(profile: profile, receiver: receiver, dir: dir)
            #expect(daemon.stderr.contains("cannot switch the receiver off"), "\(daemon.stderr.suffix(2000))")
            #expect(!daemon.stderr.contains("has no effect"), "\(daemon.stderr.suffix(2000))")
        }
    }

    /// A slow switch program (a USB hub cycling a port takes seconds) runs off the loop: the
    /// daemon reloads its profile while the off program is still running, logs the switch when
    /// the program is done, and starts the "no effect" grace only then.
    @Test func aSlowSwitchProgramDoesNotHoldTheLoop() throws {
        try Self.scenario(obey: "none", power: { dir in
            let script = try dir.write("profiles/slow-power.sh", """
                #!/bin/sh
                cd "$(dirname "$0")/.."
                if [ "$1" = off ] && [ ! -e off-done ]; then
                    : > off-running
                    sleep 4
                    date +%s.%N > off-done
                    rm -f off-running
                fi
                """, mode: 0o755)
            return "{method: command, on: [\(script), 'on'], off: [\(script), 'off'], restart: hot}"
        }) { profile, receiver, dir in
            let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(receiver.port)", "--log-level", "info"], in: dir)
            #expect(daemon.waitForLog("gpsd connected"))
            receiver.play()
            let running = dir.path("off-running")
            let deadline = Date().addingTimeInterval(90)
            waitUntil(within: .seconds(max(0, deadline.timeIntervalSinceNow))) { FileManager.default.fileExists(atPath: running) }
            #expect(FileManager.default.fileExists(atPath: running), "the policy never switched the receiver off\n\(daemon.stderr)")
            daemon.signal(SIGHUP)
            #expect(daemon.waitForLog("profile reloaded", timeout: 3), "\(daemon.stderr)")
            // Reloaded while the off program still runs: the loop did not wait for it.
            #expect(FileManager.default.fileExists(atPath: running), "\(daemon.stderr)")
            #expect(!daemon.stderr.contains(" receiver switched off "))
            #expect(daemon.waitForLog(" receiver switched off ", timeout: 15), "\(daemon.stderr)")
            // The receiver ignores the switch: said once, counted from the program's end.
            #expect(daemon.waitForLog("has no effect", timeout: 30), "\(daemon.stderr)")
            #expect(daemon.stop() == 0, "\(daemon.stderr)")
            let lines = daemon.stderr.split(separator: "\n")
            let switched = try #require(lines.first { $0.contains(" receiver switched off ") })
            let warned = try #require(lines.first { $0.contains("has no effect") })
            let done = try #require(Double(try String(contentsOfFile: dir.path("off-done"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            let switchedAt = try #require(Self.logTime(switched)), warnedAt = try #require(Self.logTime(warned))
            #expect(switchedAt >= done - 0.01, "logged at \(switchedAt), the program ended at \(done)")
            #expect(warnedAt - switchedAt > GNSSService.offGrace.secondsValue - 0.01, "\(warned)")
        }
    }

    /// The time of a log line (its first field), in seconds since the epoch.
    static func logTime(_ line: Substring) -> Double? {
        let stamp = String(line.prefix(while: { $0 != " " }))
        return (ISO8601DateFormatter.milliseconds.date(from: stamp) ?? ISO8601DateFormatter().date(from: stamp))?.timeIntervalSince1970
    }

    /// `geomon receiver test` against the receiver: its output and exit code.
    static func receiverTest(profile: String, receiver: SimulatedReceiver, offFor: Int = 6, _ more: [String] = []) throws -> ProcessResult {
        receiver.play()
        return try runGeomon(["receiver", "test", "--profile", profile, "--gpsd", "127.0.0.1:\(receiver.port)", "--off-for", String(offFor), "--fix-timeout", "20"] + more)
    }

    @Test func receiverTestPassesAReceiverThatObeys() throws {
        try Self.scenario(obey: "ubx", power: { _ in "ubx" }) { profile, receiver, _ in
            let result = try Self.receiverTest(profile: profile, receiver: receiver)
            #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("receiver test: pass: 'power: ubx'"), "\(result.stdout)")
            #expect(result.stdout.contains("  on: first fix "), "\(result.stdout)")
            // The simulator's hot start is about the planned 2 s: never advice to start warm.
            #expect(!result.stdout.contains("restart: warm"), "\(result.stdout)")
            // The receiver's own account: stopped by the test, started again.
            #expect(receiver.commands().prefix(2) == ["ubx cfg-rst gnss stop", "ubx cfg-rst gnss start"], "\(receiver.commands())")
            #expect(Self.offPeriods(receiver.states()).count == 1)
        }
    }

    /// A receiver whose hot start takes 4 s, twice the planned 2 s, switched three times: each
    /// first fix, their median, the advice, and what the policy plans with once it has measured
    /// such starts (the rule's cap, twice the profile's).
    @Test func receiverTestCyclesSayWhatThePolicyPlansWithForASlowerReceiver() throws {
        try Self.scenario(obey: "ubx", ttff: 4, power: { _ in "ubx" }) { profile, receiver, _ in
            let result = try Self.receiverTest(profile: profile, receiver: receiver, offFor: 5, ["--cycles", "3"])
            #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
            let starts = result.stdout.split(separator: "\n").compactMap { line -> Double? in
                guard line.contains("on: first fix "), let number = line.split(separator: " ").first(where: { Double($0) != nil }) else { return nil }
                return Double(number)
            }
            #expect(starts.count == 3, "\(result.stdout)")
            // The receiver sends nothing for 4 s after each start.
            #expect(starts.allSatisfy { $0 >= 4 }, "\(result.stdout)")
            for cycle in 1...3 { #expect(result.stdout.contains("  cycle \(cycle): on: first fix "), "\(result.stdout)") }
            #expect(result.stdout.contains("  first fixes: median "), "\(result.stdout)")
            #expect(result.stdout.contains("note: a slow hot start"), "\(result.stdout)")
            #expect(result.stdout.contains("planning: the policy plans with 4.0 s instead of 2.0 s once it has measured 10 hot starts"), "\(result.stdout)")
            #expect(receiver.commands().prefix(6) == ["ubx cfg-rst gnss stop", "ubx cfg-rst gnss start", "ubx cfg-rst gnss stop", "ubx cfg-rst gnss start",
                                                      "ubx cfg-rst gnss stop", "ubx cfg-rst gnss start"], "\(receiver.commands())")
            #expect(Self.offPeriods(receiver.states()).count == 3)
        }
    }

    @Test func receiverTestSaysNoEffectForAReceiverThatIgnoresTheSwitch() throws {
        try Self.scenario(obey: "ubx", ignore: true, power: { _ in "ubx" }) { profile, receiver, _ in
            let result = try Self.receiverTest(profile: profile, receiver: receiver)
            #expect(result.exitCode == 1, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("receiver test: no effect"), "\(result.stdout)")
            #expect(result.stdout.contains("reports more than 3 s after the switch"), "\(result.stdout)")
            // A switch without effect says nothing of restart classes or start times.
            #expect(!result.stdout.contains("note:") && !result.stdout.contains("restart:"), "\(result.stdout)")
        }
    }
}

extension ISO8601DateFormatter {
    /// `2026-12-02T18:04:35.942Z`, the daemon's log stamps.
    static var milliseconds: ISO8601DateFormatter {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }
}
