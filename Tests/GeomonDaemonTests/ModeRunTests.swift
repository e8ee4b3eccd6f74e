import Foundation
import GeomonCore
import GeomonTestSupport
import Testing

/// Modes in `geomon run`: the power supply read from a directory laid out like the kernel's
/// power-supply class, bind-mounted over `/sys/class/power_supply` in a private mount
/// namespace (the daemon reads its default path), a real gpsd fed by gpsfake.
extension RunCommandTests {
    /// `geomon run ARGS` in a private mount namespace whose `/sys/class/power_supply` is `supply`.
    static func namespacedDaemon(supply: String, _ arguments: [String], in dir: TemporaryDirectory) throws -> Daemon {
        let script = #"mount --bind "$0" /sys/class/power_supply && exec "$@""#
        return try Daemon(arguments, in: dir, wrapper: ["/usr/bin/unshare", "-m", "/bin/sh", "-c", script, supply])
    }

    /// The context switches of every thread of `pid` (the kernel's count of its wake-ups).
    static func contextSwitches(_ pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            return total + status.split(separator: "\n").filter { $0.contains("ctxt_switches") }
                .compactMap { $0.split(separator: "\t").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }.reduce(0, +)
        }
    }

    static func modeEvents(_ jsonLines: String) -> [String] {
        jsonLines.split(separator: "\n").compactMap { line in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], o["type"] as? String == "mode" else { return nil }
            return "\(o["from"] ?? "?")->\(o["mode"] ?? "?")"
        }
    }

    /// The van parked, then plugged in, killed with SIGKILL while driving, restarted (it
    /// resumes driving without a second event), unplugged: three switches, each once; and while
    /// parked with the receiver asleep, the supply watch adds no wake-ups.
    @Test(.enabled(if: getuid() == 0, "needs root for a private mount namespace"))
    func runSwitchesModesOnThePowerSupplyAndResumesInTheRightModeAfterKill9() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("power/AC/type", "Mains\n")
        _ = try dir.write("power/AC/online", "0\n")
        _ = try dir.write("power/BAT0/type", "Battery\n")
        _ = try dir.write("power/BAT0/capacity", "80\n")
        _ = try dir.write("power/BAT0/status", "Discharging\n")
        let (hook, hookLog) = try dir.recordingHook("mode", ["GEOMON_MODE", "GEOMON_FROM", "GEOMON_CAUSE"])
        // The only fence is ~50 km from the drive: parked (regions), the receiver sleeps for
        // max_sleep after the first fixes.
        let profile = try dir.write("van.yaml", """
            version: 1
            name: van
            mode: regions
            sources:
              gnss: {plugin: gpsd}
            policy: {max_speed: 30m/s, min_sleep: 10s, max_sleep: 30m}
            modes:
              - name: driving
                when: {external_power: true}
                mode: continuous
              - name: parked
                when: {external_power: false}
                mode: regions
            hooks:
              mode: [{exec: [\(hook)]}]
            fences:
              - id: far-away
                circle: {lat: 46.8, lon: 7.4, radius: 200m}
            """)
        let gpsd = try GPSFakeHarness(log: Self.shortSwiss, cycleSeconds: 0.01, lingerSeconds: 600)
        defer { gpsd.stop() }
        let db = dir.path("van.db")
        let arguments = ["--profile", profile, "--db", db, "--gpsd", "127.0.0.1:\(gpsd.port)", "--print-events", "--log-level", "info"]
        let first = try Self.namespacedDaemon(supply: dir.path("power"), arguments, in: dir)
        #expect(waitUntil(within: .seconds(20)) { Self.modeEvents(first.stdout) == ["default->parked"] }, "\(first.stdout)\n\(first.stderr)")
        #expect(first.waitForLog("power.action=\"gnss-off"), "\(first.stderr)")
        // Idle: the receiver asleep for up to 30 min, nothing else due once the start-up pages
        // were handed back (10 s after the start). The supply watch waits on the kernel.
        #expect(first.waitForLog("start-up pages released", timeout: 20), "\(first.stderr)")
        let base = Self.contextSwitches(first.process.processIdentifier)
        let woke = waitUntil(within: .seconds(10), every: .milliseconds(500)) {
            Self.contextSwitches(first.process.processIdentifier) > base + 2
        }
        #expect(!woke, "the idle daemon woke \(Self.contextSwitches(first.process.processIdentifier) - base) times in 10 s")

        // Plugged in: continuous, and the receiver is woken for it.
        _ = try dir.write("power/AC/online", "1\n")
        #expect(waitUntil(within: .seconds(10)) { Self.modeEvents(first.stdout) == ["default->parked", "parked->driving"] }, "\(first.stdout)")
        #expect(first.waitForLog("power.action=\"gnss-on mode"), "\(first.stderr)")
        first.signal(SIGKILL)
        first.process.waitUntilExit()

        // Restarted on the same supply: it resumes driving, no switch is reported again.
        let second = try Self.namespacedDaemon(supply: dir.path("power"), arguments, in: dir)
        #expect(second.waitForLog("power supply"), "\(second.stderr)")
        #expect(second.waitForLog("power.action=\"gnss-on"), "\(second.stderr)")
        let status = try runGeomon(["status", "--db", db])
        #expect(status.stdout.contains("mode:               driving since"), "\(status.stdout)")
        _ = try dir.write("power/AC/online", "0\n")
        #expect(waitUntil(within: .seconds(10)) { Self.modeEvents(second.stdout) == ["driving->parked"] }, "\(second.stdout)")
        #expect(second.stop() == 0, "\(second.stderr)")

        // The database holds each switch once.
        let stored = try runGeomon(["events", "--db", db, "--format", "json"])
        #expect(Self.modeEvents(stored.stdout) == ["default->parked", "parked->driving", "driving->parked"])
        let lines = Set(((try? String(contentsOfFile: hookLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init))
        #expect(lines == ["parked default external_power", "driving parked external_power", "parked driving external_power"])
    }

    /// A battery mode held at 19 %, then a restart whose first read of the gauge fails
    /// (`Unknown`, as an I²C gauge may answer): the stored capacity stands, as after every
    /// failed read, so the mode holds and no switch is reported; a good read switches again.
    @Test func aGaugeThatFailsItsFirstReadAfterARestartKeepsTheBatteryMode() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("power/BAT0/type", "Battery\n")
        _ = try dir.write("power/BAT0/capacity", "19\n")
        _ = try dir.write("power/BAT0/status", "Discharging\n")
        let profile = try dir.write("van.yaml", """
            version: 1
            name: van
            mode: regions
            sources:
              gnss: {plugin: gpsd}
            modes:
              - name: low
                when: {battery_below: 20}
                mode: regions
            fences:
              - id: home
                circle: {lat: 46.8, lon: 7.4, radius: 200m}

            """)
        let port = try GPSFakeHarness.freePort() // nothing listens: gpsd is away, geomon retries
        let arguments = ["--profile", profile, "--db", dir.path("van.db"), "--gpsd", "127.0.0.1:\(port)",
                         "--power-supply", dir.path("power"), "--print-events", "--log-level", "info"]
        let first = try Daemon(arguments, in: dir)
        #expect(waitUntil(within: .seconds(10)) { Self.modeEvents(first.stdout) == ["default->low"] }, "\(first.stdout)\n\(first.stderr)")
        #expect(first.stop() == 0, "\(first.stderr)")
        _ = try dir.write("power/BAT0/capacity", "Unknown\n")
        let second = try Daemon(arguments, in: dir)
        #expect(second.waitForLog("geomon started"), "\(second.stderr)")
        #expect(second.waitForLog("power supply"), "\(second.stderr)")
        _ = try dir.write("power/BAT0/capacity", "50\n")
        #expect(waitUntil(within: .seconds(10)) { Self.modeEvents(second.stdout) == ["low->default"] }, "\(second.stdout)\n\(second.stderr)")
        #expect(second.stop() == 0, "\(second.stderr)")
        let stored = try runGeomon(["events", "--db", dir.path("van.db"), "--format", "json"])
        #expect(Self.modeEvents(stored.stdout) == ["default->low", "low->default"], "\(stored.stdout)")
        // The switch back came with the good read, not with the failed one at the restart.
        let batteries = stored.stdout.split(separator: "\n").compactMap { line -> Int? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], o["type"] as? String == "mode" else { return nil }
            return o["battery_pct"] as? Int
        }
        #expect(batteries == [19, 50], "\(stored.stdout)")
    }

    /// A profile that gains `modes:` on SIGHUP is watched from then on: the supply is read at
    /// once and chooses a mode; unplugging switches again.
    @Test func aReloadThatAddsModesReadsTheSupplyAtOnce() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("power/AC/type", "Mains\n")
        _ = try dir.write("power/AC/online", "1\n")
        let plain = """
            version: 1
            name: van
            mode: regions
            sources:
              gnss: {plugin: gpsd}
            fences:
              - id: home
                circle: {lat: 46.8, lon: 7.4, radius: 200m}

            """
        let profile = try dir.write("van.yaml", plain)
        let port = try GPSFakeHarness.freePort() // nothing listens: gpsd is away, geomon retries
        let daemon = try Daemon(["--profile", profile, "--db", dir.path("van.db"), "--gpsd", "127.0.0.1:\(port)",
                                 "--power-supply", dir.path("power"), "--print-events", "--log-level", "info"], in: dir)
        #expect(daemon.waitForLog("geomon started"))
        #expect(!daemon.stderr.contains("power supply"))
        _ = try dir.write("van.yaml", plain + """
            modes:
              - name: driving
                when: {external_power: true}
                mode: continuous

            """)
        daemon.signal(SIGHUP)
        #expect(waitUntil(within: .seconds(10)) { Self.modeEvents(daemon.stdout) == ["default->driving"] }, "\(daemon.stdout)\n\(daemon.stderr)")
        _ = try dir.write("power/AC/online", "0\n")
        #expect(waitUntil(within: .seconds(10)) { Self.modeEvents(daemon.stdout) == ["default->driving", "driving->default"] }, "\(daemon.stdout)")
        #expect(daemon.stop() == 0, "\(daemon.stderr)")
    }
}
