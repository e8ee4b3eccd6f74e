import Foundation
import GeomonTestSupport
import Testing

struct HooksCommandTests {
    @Test func missingSubcommandIsAUsageError() throws {
        let result = try runGeomon(["hooks"])
        #expect(result.exitCode == 64)
        #expect(result.stderr.contains("geomon hooks: error: missing subcommand"))
    }

    @Test func unknownSubcommandIsAUsageError() throws {
        let result = try runGeomon(["hooks", "frob"])
        #expect(result.exitCode == 64)
        #expect(result.stderr.contains("unknown subcommand 'frob'"))
    }

    @Test func fireNeedsProfileAndAValidEvent() throws {
        #expect(try runGeomon(["hooks", "fire", "--event", "enter"]).exitCode == 64)
        let bad = try runGeomon(["hooks", "fire", "--profile", "p.yaml", "--event", "arrive"])
        #expect(bad.exitCode == 64)
        #expect(bad.stderr.contains("option '--event' must be one of enter, exit, dwell, location, approach, moving, still, trip_start, trip_end, arrival, departure, overspeed, overspeed_end, mode (got 'arrive')"))
    }

    @Test func fireWithAMissingProfileExits66() throws {
        let result = try runGeomon(["hooks", "fire", "--profile", "/nonexistent/p.yaml", "--event", "enter", "--fence", "x"])
        #expect(result.exitCode == 66)
        #expect(result.stderr.contains("geomon: error: cannot read profile '/nonexistent/p.yaml': No such file or directory"))
    }

    @Test func listNeedsADatabaseThatExists() throws {
        #expect(try runGeomon(["hooks", "list"]).exitCode == 64)
        let result = try runGeomon(["hooks", "dead", "--db", "/nonexistent/geomon.db"])
        #expect(result.exitCode == 66)
        #expect(result.stderr == "geomon: error: /nonexistent/geomon.db: no such database\n", "\(result.stderr)")
    }

    /// A directory or a file that is no geomon database: the reading and the writing commands
    /// say so alike, and no lock file is made beside it.
    @Test func aDirectoryOrAForeignFileIsRefusedWithoutALockBesideIt() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let folder = dir.path("folder.db")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let foreign = try dir.write("foreign.db", "not a database\n")
        for command in [["status"], ["hooks", "dead"], ["hooks", "retry"], ["publish", "retry"]] {
            let d = try runGeomon(command + ["--db", folder])
            #expect(d.exitCode == 66 && d.stderr == "geomon: error: \(folder): is a directory, not a database\n", "\(command): \(d.stderr)")
            let f = try runGeomon(command + ["--db", foreign])
            #expect(f.exitCode == 65 && f.stderr.contains("not a geomon database (not an SQLite file); the file was left untouched"), "\(command): \(f.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder + ".lock") && !FileManager.default.fileExists(atPath: foreign + ".lock"))
    }
}
