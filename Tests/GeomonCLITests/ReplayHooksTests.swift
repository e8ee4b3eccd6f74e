import Foundation
import GeomonTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `geomon replay` running hooks for real, and `geomon hooks list|dead|retry` on its database:
/// the built binary, real hook processes, real SQLite files.
@Suite(.serialized)
struct ReplayHooksTests {
    static let track = TestSupport.fixture("tracks/genivi_20100403_Z205_Switzerland_short.nmea").path

    /// A hook appending "event-id fence attempt" to `log`; fails (exit 3) while `gate` is
    /// missing when given; sleeps `sleep` seconds first.
    static func hook(in dir: TemporaryDirectory, log: String, sleep: String = "0", gate: String? = nil, started: String? = nil) throws -> String {
        var script = "#!/bin/sh\n"
        if let started { script += "echo \"$GEOMON_EVENT_ID\" >> '\(started)'\n" }
        script += "sleep \(sleep)\n"
        if let gate { script += "[ -e '\(gate)' ] || { echo 'gate closed' >&2; exit 3; }\n" }
        script += "printf '%s %s %s\\n' \"$GEOMON_EVENT_ID\" \"$GEOMON_FENCE\" \"$GEOMON_ATTEMPT\" >> '\(log)'\n"
        return try dir.write("hook.sh", script, mode: 0o755)
    }

    /// The torture profile with `hook` as every hook; `edit` rewrites the text further.
    static func profile(in dir: TemporaryDirectory, hook: String, edit: (String) -> String = { $0 }) throws -> String {
        let text = try String(contentsOf: TestSupport.fixture("torture/profile.yaml"), encoding: .utf8)
        return try dir.write("profile.yaml", edit(text.replacingOccurrences(of: "@HOOK@", with: hook)))
    }

    /// (id, fence) of the stored events, in event order.
    static func events(db: String, polling: Bool = false) throws -> [(id: String, fence: String)] {
        let result = try runGeomon(["events", "--db", db, "--format", "json"])
        if polling && result.exitCode != 0 { return [] }   // not created yet
        #expect(result.exitCode == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let id = object["id"] as? String else { return nil }
            return (id, object["fence"] as? String ?? "")
        }
    }

    /// (id, fence, attempt) per line of the hook log.
    static func logged(_ path: String) -> [(id: String, fence: String, attempt: Int)] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, let attempt = Int(parts[2]) else { return nil }
            return (String(parts[0]), String(parts[1]), attempt)
        }
    }

    /// Per fence, the first delivery of each event is in event order and every event is there.
    static func expectDeliveredInOrder(_ events: [(id: String, fence: String)], _ log: [(id: String, fence: String, attempt: Int)]) {
        var expected: [String: [String]] = [:]
        for e in events { expected[e.fence, default: []].append(e.id) }
        var seen: Set<String> = []
        var firsts: [String: [String]] = [:]
        for line in log where seen.insert(line.id).inserted { firsts[line.fence, default: []].append(line.id) }
        #expect(firsts == expected)
    }

    /// Starts geomon without waiting (stdout/stderr to /dev/null).
    static func launch(_ arguments: [String], environment: [String: String]? = nil) throws -> Process {
        let process = Process()
        process.executableURL = TestSupport.geomonBinary
        process.arguments = arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func replayDeliversEveryEventToItsHookInOrderBeforeExiting() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path("hooks.log")
        let profile = try Self.profile(in: dir, hook: try Self.hook(in: dir, log: log))
        let db = dir.path("r.db")
        let result = try runGeomon(["replay", "--profile", profile, Self.track, "--db", db, "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let events = try Self.events(db: db)
        #expect(events.count >= 20)
        let lines = Self.logged(log)
        #expect(lines.map(\.id) == events.map(\.id) || Set(lines.map(\.id)) == Set(events.map(\.id)))
        #expect(lines.count == events.count && lines.allSatisfy { $0.attempt == 1 })
        Self.expectDeliveredInOrder(events, lines)
        let list = try runGeomon(["hooks", "list", "--db", db])
        #expect(list.exitCode == 0 && list.stdout == "no pending deliveries\n")
    }

    @Test func noHooksStoresEventsWithoutDeliveries() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path("hooks.log")
        let profile = try Self.profile(in: dir, hook: try Self.hook(in: dir, log: log))
        let db = dir.path("r.db")
        let result = try runGeomon(["replay", "--profile", profile, Self.track, "--db", db, "--no-hooks"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(try Self.events(db: db).count >= 20)
        #expect(!FileManager.default.fileExists(atPath: log))
        #expect(try runGeomon(["hooks", "list", "--db", db]).stdout == "no pending deliveries\n")
    }

    @Test func deadDeliveriesAreListedRequeuedAndDeliveredByTheNextReplay() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path("hooks.log"), gate = dir.path("open")
        let hook = try Self.hook(in: dir, log: log, gate: gate)
        let profile = try Self.profile(in: dir, hook: hook) {
            $0.replacingOccurrences(of: "retry: {attempts: 20, backoff: 100ms, max_backoff: 1s}", with: "retry: {attempts: 2, backoff: 10ms, max_backoff: 20ms}")
        }
        let db = dir.path("r.db")
        let first = try runGeomon(["replay", "--profile", profile, Self.track, "--db", db])
        #expect(first.exitCode == 0)
        #expect(first.stderr.contains("dead-lettered"))
        #expect(first.stderr.contains("see 'geomon hooks dead --db \(db)'"))
        let events = try Self.events(db: db)
        #expect(events.count >= 20 && Self.logged(log).isEmpty)

        // A dead delivery does not block its fence: every delivery was tried twice and died.
        let dead = try runGeomon(["hooks", "dead", "--db", db])
        #expect(dead.exitCode == 0)
        #expect(dead.stdout.components(separatedBy: " dead attempt 2").count - 1 == events.count)
        #expect(dead.stdout.contains("  hook  [\"\(hook)\",\"torture\"]"))
        #expect(dead.stdout.contains("  error attempt 2/2: exit status 3"))
        #expect(try runGeomon(["hooks", "list", "--db", db]).stdout == "no pending deliveries\n")

        let retry = try runGeomon(["hooks", "retry", "--db", db])
        #expect(retry.exitCode == 0 && retry.stdout == "requeued \(events.count) dead deliveries\n")
        let list = try runGeomon(["hooks", "list", "--db", db])
        #expect(list.stdout.components(separatedBy: " pending attempt 0").count - 1 == events.count)
        #expect(try runGeomon(["hooks", "dead", "--db", db]).stdout == "no dead deliveries\n")

        // The same replay again: no new fixes, but it delivers what is pending from before.
        _ = try dir.write("open", "")
        let second = try runGeomon(["replay", "--profile", profile, Self.track, "--db", db])
        #expect(second.exitCode == 0, "\(second.stderr)")
        #expect(second.stdout.isEmpty)
        Self.expectDeliveredInOrder(events, Self.logged(log))
        #expect(try runGeomon(["hooks", "list", "--db", db]).stdout == "no pending deliveries\n")
    }

    @Test func aRunningDaemonOwnsItsDatabaseAndRunsWhatHooksRetryRequeues() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path("hooks.log"), gate = dir.path("open")
        let profile = try Self.profile(in: dir, hook: try Self.hook(in: dir, log: log, gate: gate)) {
            $0.replacingOccurrences(of: "retry: {attempts: 20, backoff: 100ms, max_backoff: 1s}", with: "retry: {attempts: 1}")
        }
        let db = dir.path("r.db")
        #expect(try runGeomon(["replay", "--profile", profile, Self.track, "--db", db]).exitCode == 0)
        let events = try Self.events(db: db)
        #expect(events.count >= 20 && Self.logged(log).isEmpty)

        // The daemon (gpsd away: it retries in the background) owns the database.
        let port = try GPSFakeHarness.freePort()
        let daemon = try Self.launch(["run", "--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(port)"])
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL); daemon.waitUntilExit() } }
        #expect(waitUntil { InstanceLockProbe.held(db) })

        // A replay into its database is refused like a second `run`, and writes nothing.
        let intruder = try runGeomon(["replay", "--profile", profile, Self.track, "--db", db])
        #expect(intruder.exitCode == 1)
        #expect(intruder.stderr.contains("another geomon instance is already running"), "\(intruder.stderr)")
        #expect(try Self.events(db: db).map(\.id) == events.map(\.id))
        // Readers keep working.
        #expect(try runGeomon(["status", "--db", db]).exitCode == 0)

        // `hooks retry` asks the daemon, which delivers at once (not after a restart).
        _ = try dir.write("open", "")
        let retry = try runGeomon(["hooks", "retry", "--db", db])
        #expect(retry.exitCode == 0, "\(retry.stderr)")
        #expect(retry.stdout.hasPrefix("asked the running geomon (pid \(daemon.processIdentifier)) to requeue \(events.count) dead deliveries"), "\(retry.stdout)")
        #expect(waitUntil(within: .seconds(30)) { Set(Self.logged(log).map(\.id)) == Set(events.map(\.id)) })
        Self.expectDeliveredInOrder(events, Self.logged(log))
        #expect(Self.logged(log).allSatisfy { $0.attempt == 1 })
        #expect(daemon.isRunning)
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0)
        #expect(try runGeomon(["hooks", "list", "--db", db]).stdout == "no pending deliveries\n")
    }

    @Test func killNineDuringDeliveryThenTheSameCommandDeliversEverything() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path("hooks.log")
        // The kill lands while a hook runs: after it started (its mark), within its 0.2 s.
        let started = dir.path("started.log")
        let profile = try Self.profile(in: dir, hook: try Self.hook(in: dir, log: log, sleep: "0.2", started: started))
        let db = dir.path("r.db")
        let arguments = ["replay", "--profile", profile, Self.track, "--db", db, "--format", "json"]
        func starts() -> Int { ((try? String(contentsOfFile: started, encoding: .utf8)) ?? "").split(separator: "\n").count }
        for round in 1...2 {
            let process = try Self.launch(arguments)
            let already = starts()
            #expect(waitUntil { starts() > already || !process.isRunning })
            #expect(process.isRunning, "round \(round): replay finished before the kill")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
        }
        let open = try runGeomon(["hooks", "list", "--db", db])
        #expect(open.stdout != "no pending deliveries\n")   // the kills left work behind

        let final = try runGeomon(arguments)
        #expect(final.exitCode == 0, "\(final.stderr)")
        let events = try Self.events(db: db)
        #expect(events.count >= 20)
        let lines = Self.logged(log)
        #expect(Set(lines.map(\.id)) == Set(events.map(\.id)))
        Self.expectDeliveredInOrder(events, lines)
        #expect(try runGeomon(["hooks", "list", "--db", db]).stdout == "no pending deliveries\n")
    }

    @Test func conditionsHoldDeliveriesUntilTheFakedNetworkAndPowerAppear() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path("hooks.log")
        let profile = try Self.profile(in: dir, hook: try Self.hook(in: dir, log: log)) {
            $0.replacingOccurrences(of: "timeout: 10s}", with: "timeout: 10s, when: {network: true, external_power: true}}")
        }
        let header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        _ = try dir.write("proc/net/route", header)
        _ = try dir.write("sys/class/power_supply/AC/type", "Mains\n")
        _ = try dir.write("sys/class/power_supply/AC/online", "0\n")
        _ = try dir.write("sys/class/power_supply/BAT0/type", "Battery\n")
        let db = dir.path("r.db")
        let process = try Self.launch(
            ["replay", "--profile", profile, Self.track, "--db", db],
            environment: ["GEOMON_PROCFS_ROOT": dir.path("proc"), "GEOMON_SYSFS_ROOT": dir.path("sys")])
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        // Every event is decided and stored, and the replay keeps waiting with nothing delivered.
        #expect(waitUntil { (try? Self.events(db: db, polling: true).count) ?? 0 >= 20 })
        let list = try runGeomon(["hooks", "list", "--db", db])
        #expect(list.stdout.contains(" pending attempt 0"))
        // A few condition rechecks (every second in replay) pass; still held back. A fixed wait:
        // what is asserted is that nothing happens in it, which no condition can mark.
        Thread.sleep(forTimeInterval: 2.5)
        #expect(process.isRunning)
        #expect(Self.logged(log).isEmpty)

        _ = try dir.write("proc/net/route", header + "wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n")
        // Again a span in which nothing may happen (more than one recheck).
        Thread.sleep(forTimeInterval: 1.5)
        #expect(process.isRunning && Self.logged(log).isEmpty)   // network alone is not enough

        _ = try dir.write("sys/class/power_supply/AC/online", "1\n")
        #expect(waitUntil { !process.isRunning })
        #expect(process.terminationStatus == 0)
        let events = try Self.events(db: db)
        Self.expectDeliveredInOrder(events, Self.logged(log))
    }

    @Test func fireRunsTheProfilesHooksOnceWithASyntheticEvent() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("ok.sh", "#!/bin/sh\necho \"$GEOMON_EVENT $GEOMON_FENCE test=$GEOMON_TEST attempt=$GEOMON_ATTEMPT\"\n", mode: 0o755)
        _ = try dir.write("bad.sh", "#!/bin/sh\necho nope >&2\nexit 4\n", mode: 0o755)
        let profile = try dir.write("p.yaml", """
            version: 1
            name: fire
            mode: regions
            sources:
              gnss: {}
            fences:
              - {id: home, circle: {lat: 46.3, lon: 6.9, radius: 100m}}
            hooks:
              enter: [{exec: [./ok.sh]}]
              exit: [{exec: [./ok.sh]}, {exec: [./bad.sh]}]

            """)
        let enter = try runGeomon(["hooks", "fire", "--profile", profile, "--event", "enter", "--fence", "home"])
        #expect(enter.exitCode == 0, "\(enter.stderr)")
        // exec[0] is shown as the profile loader resolved it (against the profile's directory).
        #expect(enter.stdout.hasPrefix("ok   [\"\(dir.url.path)/"))
        #expect(enter.stdout.hasSuffix("ok.sh\"]: exit status 0\n  stdout| enter home test=1 attempt=1\n"))
        let exit = try runGeomon(["hooks", "fire", "--profile", profile, "--event", "exit", "--fence", "home"])
        #expect(exit.exitCode == 1)
        #expect(exit.stdout.contains("bad.sh\"]: exit status 4: nope\n"))
        #expect(exit.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL ") }.count == 1)
        let none = try runGeomon(["hooks", "fire", "--profile", profile, "--event", "dwell", "--fence", "home"])
        #expect(none.exitCode == 0 && none.stdout == "no dwell hooks in profile 'fire'\n")

        // A hook that floods its output gets a bounded excerpt: first and last lines.
        _ = try dir.write("loud.sh", "#!/bin/sh\nseq 1 100000\nhead -c 5000 /dev/zero | tr '\\0' y\n", mode: 0o755)
        let loudProfile = try dir.write("loud.yaml", try String(contentsOfFile: profile, encoding: .utf8)
            .replacingOccurrences(of: "enter: [{exec: [./ok.sh]}]", with: "enter: [{exec: [./loud.sh]}]"))
        let loud = try runGeomon(["hooks", "fire", "--profile", loudProfile, "--event", "enter", "--fence", "home"])
        let lines = loud.stdout.split(separator: "\n")
        #expect(loud.exitCode == 0 && lines.count <= 23, "\(lines.count) lines")
        #expect(lines.contains("  stdout| 1") && lines.contains { $0.hasPrefix("  stdout| … (") && $0.hasSuffix("lines omitted)") })
        #expect(lines.contains("  stdout| … (output truncated)"))
    }

    @Test func listAndDeadOnANonDatabaseFileFailCleanly() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let junk = try dir.write("junk.db", "this is not sqlite")
        let result = try runGeomon(["hooks", "list", "--db", junk])
        #expect(result.exitCode == 65)
        #expect(result.stderr.hasPrefix("geomon: error: "))
        #expect(try String(contentsOfFile: junk, encoding: .utf8) == "this is not sqlite")
    }
}

/// Whether a process holds a database's instance lock (what `geomon run` takes), probed the
/// way `geomon status` does: a non-blocking shared `flock` on `<db>.lock`.
enum InstanceLockProbe {
    static func held(_ db: String) -> Bool {
        let fd = open(db + ".lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return true
    }
}
