import Foundation
import GeomonTestSupport
import Testing

/// `geomon status` on a database something else holds, and the commands that read a profile
/// without running anything of it: each takes `--insecure-permissions`, which the refusal of
/// a group-writable profile names.
struct StatusCommandTests {
    /// A database in a directory the user may not search (/var/lib/geomon is the daemon
    /// user's alone) is said to be unreadable, with the reason, not to be missing.
    @Test func aDatabaseThisUserMayNotReachIsNotCalledMissing() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.write("private/geomon.db", "")
        let home = dir.path("private")
        defer {
            chmod(home, 0o700)
            dir.remove()
        }
        let result: ProcessResult
        if getuid() == 0 {
            // Root searches every directory: the command runs as nobody.
            chmod(dir.url.path, 0o755)
            chmod(home, 0o700)
            result = try runProcess(URL(fileURLWithPath: "/usr/bin/setpriv"),
                                    ["--reuid=65534", "--regid=65534", "--clear-groups", TestSupport.geomonBinary.path, "status", "--db", db])
        } else {
            chmod(home, 0)
            result = try runGeomon(["status", "--db", db])
        }
        #expect(result.exitCode == 66)
        #expect(result.stderr.hasPrefix("geomon: error: \(db): cannot read database: Permission denied"), "\(result.stderr)")
    }

    static func fixture(_ name: String) -> String { TestSupport.fixture("replay/\(name)").path }

    /// A replay holding the database is no daemon: status says what holds it, not "running".
    @Test func aReplayHoldingTheDatabaseIsNoDaemonRunning() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = dir.path("r.db")
        let replay = Process()
        replay.executableURL = TestSupport.geomonBinary
        // Paced: the 10,327 s drive holds the database for as long as the test needs.
        replay.arguments = ["replay", "--profile", Self.fixture("swiss-drive.profile.yaml"), "--no-hooks", "--db", db,
                            "--speed", "1", Self.fixture("swiss-drive.jsonl")]
        replay.standardOutput = FileHandle.nullDevice
        replay.standardError = FileHandle.nullDevice
        try replay.run()
        defer {
            replay.terminate()
            replay.waitUntilExit()
        }
        #expect(waitUntil(within: .seconds(20)) {
            (try? String(contentsOfFile: db + ".lock", encoding: .utf8))?.contains("replay") == true
                && FileManager.default.fileExists(atPath: db)
        })
        let status = try runGeomon(["status", "--db", db])
        #expect(status.exitCode == 0, "\(status.stderr)")
        #expect(status.stdout.contains("daemon:             not running (a geomon replay, pid \(replay.processIdentifier), holds the database)"),
                "\(status.stdout)")
    }

    /// A group-writable profile is refused with a hint to `--insecure-permissions`, and every
    /// command that reads one takes it.
    @Test func everyCommandThatReadsAProfileTakesInsecurePermissions() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try dir.write("p.yaml", """
            version: 1
            name: writable
            mode: regions
            sources: {gnss: {plugin: gpsd}}
            storage: {path: \(dir.path("w.db"))}
            fences:
              - {id: home, circle: {lat: 47.332895, lon: 7.821065, radius: 150m}}

            """, mode: 0o664)
        let replay = try runGeomon(["replay", "--profile", profile, "--no-hooks", "--db", dir.path("w.db"), "--insecure-permissions",
                                    Self.fixture("swiss-drive.jsonl")])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        for arguments in [["query", "--profile", profile, "47", "8"], ["status", "--profile", profile],
                          ["events", "--db", dir.path("w.db"), "--svg", dir.path("e.svg"), "--profile", profile]] {
            let refused = try runGeomon(arguments)
            #expect(refused.exitCode == 65 && refused.stderr.contains("--insecure-permissions"), "\(arguments): \(refused.stderr)")
            let taken = try runGeomon(arguments + ["--insecure-permissions"])
            #expect(taken.exitCode == 0, "\(arguments): \(taken.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: dir.path("e.svg")))
        let help = try runGeomon(["receiver", "test", "--help"])
        #expect(help.stdout.contains("--insecure-permissions"), "\(help.stdout)")
    }
}
