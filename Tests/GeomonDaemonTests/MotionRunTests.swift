import Foundation
import GeomonCore
import GeomonEvaluation
import GeomonFormat
import GeomonSources
import GeomonTestSupport
import Testing

/// `sources.motion` in `geomon run`: a real gpsd fed the recorded drive out of its depot at the
/// recording's pace, and a motion command that says what the recording implies (still in the
/// depot, moving when the car pulls away) on the same clock. The receiver stays off while the
/// car stands, is switched on right after the command says moving, and the events are those of
/// `geomon replay --motion` of the same log (within an epoch).
///
/// Part of `RunCommandTests` (serialized): a run against a paced gpsd holds a test thread for
/// the recording's length, and one more such suite in parallel starves the others' time limits.
extension RunCommandTests {
    /// Seconds since the first log line, from a log line's leading RFC 3339 time.
    static func stamp(_ line: Substring) -> Double? {
        let text = String(line.prefix { $0 != " " })
        return (ISO8601DateFormatter.milliseconds.date(from: text) ?? ISO8601DateFormatter().date(from: text))?.timeIntervalSince1970
    }

    /// A motion command that says what carries the device: the running daemon plans with that
    /// activity's bounds over the declared one's, and `geomon status` says so. Lines it
    /// misspells are skipped, and the log says so once.
    @Test func aMotionCommandsActivityIsWhatTheRunningPolicyPlansWith() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let script = try dir.write("bus.sh", """
            #!/bin/sh
            for i in 1 2 3; do echo '{"moving": true, "activity": "Vehicle"}'; sleep 0.2; done
            while true; do echo '{"moving": true, "activity": "vehicle"}'; sleep 1; done
            """, mode: 0o755)
        let profile = try dir.write("p.yaml", """
            version: 1
            name: bus
            mode: regions
            sources:
              gnss: {plugin: gpsd}
              motion: {plugin: command, exec: [\(script)]}
            policy: {activity: foot}
            fences:
              - {id: stop, circle: {lat: 46.5, lon: 6.6, radius: 100m}}

            """)
        // No gpsd: the receiver's source waits; the policy plans all the same.
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:9", "--log-level", "info"], in: dir)
        #expect(daemon.waitForLog("motion source senses an activity"), "\(daemon.stderr)")
        #expect(daemon.stderr.components(separatedBy: "motion command printed malformed lines").count == 2, "\(daemon.stderr)")
        var planning: [String: Any] = [:]
        try await waitUntil(within: .seconds(10)) {
            let status = try runGeomon(["status", "--db", dir.path("run.db"), "--format", "json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            planning = (object?["daemon"] as? [String: Any])?["planning"] as? [String: Any] ?? [:]
            return planning["from"] as? String == "sensed"
        }
        #expect(planning["activity"] as? String == "vehicle", "\(planning)")
        #expect(planning["bounds"] as? String == "max_speed 45 m/s, max_acceleration 1 m/s²", "\(planning)")
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
        let text = try runGeomon(["status", "--db", dir.path("run.db")])
        #expect(text.stdout.contains("planned for:        vehicle (sensed): max_speed 45 m/s"), "\(text.stdout)")
    }

    @Test func theReceiverStaysOffWhileParkedWakesOnMotionAndDecidesWhatReplayDecides() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let gpsd = try PacedGPSD(log: RunCommandTests.shortSwiss, seconds: 100)
        defer { gpsd.stop() }
        let log = dir.url.appendingPathComponent("served.nmea")
        try gpsd.writeServedLog(to: log)
        let fixes = try TrackReader.read(path: log.path).fixes.sorted { $0.time < $1.time }
        let first = try #require(fixes.first).time
        // What the sensor feels, from the recording as replay reads it: no movement in the
        // depot, movement 2.5 s after the car pulls away, none at the next stop, movement again.
        // The daemon makes `still` of it after `still_after` (10 s), as replay's derivation does.
        // (`movementGap` zero: the replay below bridges no gap, `--interpolate-gaps 0`.)
        let changes = MotionSignal(stillAfter: .zero, movementGap: .zero).changes(fixes)
        #expect(changes.count >= 2 && changes[0].motion == .still && changes[1].motion == .moving, "\(changes)")
        let schedule = changes.map { "\(NumberText.fixed(($0.time - first).secondsValue, 3)) \($0.motion == .moving ? "true" : "false")" }
        _ = try dir.write("schedule", schedule.joined(separator: "\n") + "\n")
        // The command: waits for the recording to start, then says each change at its time,
        // repeating its last word every 2 s in between (so that it is never stale).
        let script = try dir.write("motion.py", """
            #!/usr/bin/env python3
            import os, sys, time
            os.chdir(os.path.dirname(os.path.abspath(__file__)))
            open("started").read()   # a FIFO: the test opens it when the recording starts
            start = time.monotonic()
            def say(moving):
                print('{"moving": %s}' % moving, flush=True)
            say("false")
            last = "false"
            beat = time.monotonic()
            def wait_until(at):
                global beat
                while True:
                    now = time.monotonic()
                    if now - start >= at:
                        return
                    if now - beat >= 2:
                        say(last)
                        beat = now
                    # The sensor's own pace: until its next word, a change or the 2 s repeat.
                    time.sleep(min(start + at, beat + 2) - now)
            for line in open("schedule"):
                at, moving = line.split()
                wait_until(float(at))
                say(moving)
                last = moving
            wait_until(float("inf"))
            """, mode: 0o755)
        #expect(mkfifo(dir.path("started"), 0o600) == 0)
        let profile = try Self.pacedPolicyProfile("motion-live", fixes: fixes, sources: """
              motion: {plugin: command, exec: [\(script)], still_after: 10s, stale_after: 30s}

            """, in: dir)
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(gpsd.port)",
                                 "--print-events", "--log-level", "info"], in: dir)
        // The receiver's watch is on, and the command is waiting on its FIFO.
        #expect(daemon.waitForLog("power.action=\"gnss-on"))
        var fifo: Int32 = -1
        try await waitUntil(within: .seconds(10)) {
            fifo = open(dir.path("started"), O_WRONLY | O_NONBLOCK)
            return fifo >= 0
        }
        #expect(fifo >= 0, "the motion command never opened its FIFO: \(daemon.stderr)")
        close(fifo)
        gpsd.start()
        try await waitUntil(within: .seconds(gpsd.duration + 30)) { gpsd.finished }
        // A fixed wait after the recording, as in RunCommandTests: no line marks that the
        // daemon took gpsd's last epoch (it may rightly not).
        try await Task.sleep(for: .milliseconds(1_500))
        #expect(daemon.stop() == 0, "\(daemon.stderr)")

        // The log: the sensor's words and the receiver's switches, in order, with their times.
        let lines = daemon.stderr.split(separator: "\n")
        let words = lines.filter { $0.contains(" motion motion=") }
        #expect(words.count >= 2, "\(daemon.stderr)")
        let stillAt = try #require(words.first { $0.contains("motion=still") }.flatMap { Self.stamp($0) })
        let movingAt = try #require(words.first { $0.contains("motion=moving") }.flatMap { Self.stamp($0) })
        let switches = lines.filter { $0.contains("power.action=\"gnss-on") || $0.contains("power.action=\"gnss-off") }
        // Parked: no wake between the sensor's still and its moving but a check-back for a
        // drift at `creep_speed` (the depot is within reach of a fence).
        let wakesParked = switches.filter { $0.contains("gnss-on") && !$0.contains("gnss-on still-check") }
            .compactMap { Self.stamp($0) }.filter { $0 > stillAt && $0 < movingAt }
        #expect(wakesParked.isEmpty, "woken while parked at \(wakesParked)\n\(daemon.stderr)")
        // Moving: the receiver is switched on within a second (or, where the sensor
        // interrupted a sleep the bounds planned, that sleep goes on: a wake is planned).
        let after = lines.filter { (Self.stamp($0) ?? 0) >= movingAt }
        let woke = after.first { $0.contains("power.action=\"gnss-on motion") }.flatMap { Self.stamp($0) }
        let resumed = after.first { $0.contains("power.action=\"wake-at") && $0.contains(" motion") }
        #expect((woke.map { $0 - movingAt < 1 } ?? false) || resumed != nil, "\(daemon.stderr)")

        // `geomon status` shows the sensor's last word and since when.
        let status = try runGeomon(["status", "--db", dir.path("run.db"), "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let motion = try #require((object["daemon"] as? [String: Any])?["motion"] as? [String: Any], "\(status.stdout)")
        #expect(motion["plugin"] as? String == "command")
        #expect(["moving", "still"].contains(motion["state"] as? String ?? ""), "\(motion)")
        #expect(motion["since"] is String)
        let text = try runGeomon(["status", "--db", dir.path("run.db")])
        #expect(text.stdout.contains("motion:             "), "\(text.stdout)")
        #expect(text.stdout.split(separator: "\n").contains { $0.hasPrefix("motion:") && $0.hasSuffix(" (when it last ran)") }, "\(text.stdout)")
        // The daemon has stopped: its last record is said as such, not as the present.
        #expect(text.stdout.contains("daemon:             not running; when it last ran: receiver "), "\(text.stdout)")

        let result = try runGeomon(["replay", "--profile", profile, log.path, "--format", "json", "--no-hooks",
                                    "--interpolate-gaps", "0", "--motion"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let replayed = try RunCommandTests.events(result.stdout)
        let live = try RunCommandTests.events(daemon.stdout, shift: RunCommandTests.weekRolloverSeconds)
        #expect(replayed.count >= 1)
        // The same events; their times may differ by an epoch: the sensor speaks on the real
        // clock and replay's on the recording's, so a wake near an epoch may take the next one.
        #expect(live.map { "\($0.type) \($0.fence)" } == replayed.map { "\($0.type) \($0.fence)" }, "live: \(live)\nreplay: \(replayed)")
        for (l, r) in zip(live, replayed) { #expect(abs(l.time - r.time) <= 2, "live: \(live)\nreplay: \(replayed)") }
    }
}
