import Foundation
import GeomonConfig
import GeomonTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// StrictModes-style refusals (docs/security.md) through `geomon validate` / `replay`, and the
/// environment a hook really sees.
@Suite(.serialized)
struct SecurityTests {
    static let isRoot = geteuid() == 0
    static let otherUID: uid_t = 4242

    static let geojson = """
        {"type": "FeatureCollection", "features": [{"type": "Feature", "id": "p", "properties": {"name": "P"},
          "geometry": {"type": "Polygon", "coordinates": [[[6.9, 46.3], [6.91, 46.3], [6.91, 46.31], [6.9, 46.3]]]}}]}
        """

    static func profile(hook: String? = nil, geojson: String? = nil) -> String {
        var text = """
            version: 1
            name: t
            mode: continuous
            sources: {gnss: {plugin: gpsd}}
            fences:
              - id: a
                circle: {lat: 46.3, lon: 6.9, radius: 150m}

            """
        if let geojson { text += "  - geojson: \(geojson)\n" }
        if let hook { text += "hooks:\n  enter: [{exec: [\(hook)]}]\n" }
        return text
    }

    /// A directory with a valid profile, a hook and a GeoJSON file, all owner-only writable.
    static func setUp() throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory(prefix: "geomon-security")
        chmod(directory.url.path, 0o755)
        _ = try directory.write("hook.sh", "#!/bin/sh\nenv > \"$1\"\n", mode: 0o755)
        _ = try directory.write("zones.geojson", geojson, mode: 0o644)
        let profile = try directory.write("p.yaml", profile(hook: "./hook.sh, \(directory.path("env.txt"))", geojson: "zones.geojson"), mode: 0o644)
        return (directory, profile)
    }

    @Test func aSafeProfileValidates() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        let result = try runGeomon(["validate", profile])
        #expect(result.exitCode == 0, "\(result.stderr)")
    }

    @Test(arguments: [0o666, 0o664, 0o646])
    func aWritableProfileIsRefusedUnlessOverridden(mode: Int) throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        chmod(profile, mode_t(mode))
        let result = try runGeomon(["validate", profile])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("\(profile):1:1: error: profile '\(profile)' is group- or world-writable (mode 0\(String(mode, radix: 8))); others could change it: chmod go-w \(profile), or pass --insecure-permissions to accept it"))
        #expect(try runGeomon(["validate", "--insecure-permissions", profile]).exitCode == 0)
        // replay loads profiles the same way.
        let replay = try runGeomon(["replay", "--profile", profile, "/nonexistent.jsonl"])
        #expect(replay.exitCode == 65)
        #expect(replay.stderr.contains("is group- or world-writable"))
    }

    /// A database other users may read (it holds the location history) is used, with a
    /// warning saying how to make it private; a private one draws none.
    @Test func aDatabaseOthersMayReadDrawsAWarning() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        let track = try directory.write("t.jsonl", #"{"time":"2024-05-01T12:00:00Z","lat":46.0,"lon":7.0,"accuracy_m":5}"# + "\n")
        let db = directory.path("r.db")
        let first = try runGeomon(["replay", "--profile", profile, "--db", db, "--no-hooks", track])
        #expect(first.exitCode == 0 && !first.stderr.contains("readable by other users"), "\(first.stderr)")
        chmod(db, 0o644)
        let again = try runGeomon(["replay", "--profile", profile, "--db", db, "--no-hooks", track])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(again.stderr.contains("geomon: warning: \(db) is readable by other users (mode 644)"), "\(again.stderr)")
    }

    @Test func aWritableGeoJSONFileIsRefusedAtItsLine() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        chmod(directory.path("zones.geojson"), 0o664)
        let result = try runGeomon(["validate", profile])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("\(profile):8:14: error: GeoJSON file 'zones.geojson' is group- or world-writable (mode 0664)"))
        #expect(try runGeomon(["validate", "--insecure-permissions", profile]).exitCode == 0)
    }

    @Test func aWritableHookIsRefusedUnlessOverridden() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        chmod(directory.path("hook.sh"), 0o775)
        let result = try runGeomon(["validate", profile])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("error: hook program './hook.sh' (\(directory.path("hook.sh"))) is group- or world-writable (mode 0775)"), "\(result.stderr)")
        #expect(try runGeomon(["validate", "--insecure-permissions", profile]).exitCode == 0)
    }

    // MARK: as root: ownership, parent directories, symlinks

    @Test(.enabled(if: isRoot))
    func asRootAProfileOwnedByAnotherUserIsRefused() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        chown(profile, Self.otherUID, 0)
        let result = try runGeomon(["validate", profile])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("error: profile '\(profile)': it is owned by uid 4242, not root"))
        #expect(try runGeomon(["validate", "--insecure-permissions", profile]).exitCode == 0)
    }

    @Test(.enabled(if: isRoot))
    func asRootAHookInAnotherUsersDirectoryIsRefused() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        let bin = directory.path("bin")
        mkdir(bin, 0o755)
        _ = try directory.write("bin/hook.sh", "#!/bin/sh\nexit 0\n", mode: 0o755)
        chown(bin, Self.otherUID, 0)
        try Self.profile(hook: "bin/hook.sh").write(toFile: profile, atomically: false, encoding: .utf8)
        let result = try runGeomon(["validate", profile])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("error: hook program 'bin/hook.sh': its directory \(bin) is owned by uid 4242, not root"))
    }

    @Test(.enabled(if: isRoot))
    func asRootAWritableParentDirectoryIsRefusedButStickyRootDirectoriesAreNot() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        chmod(directory.url.path, 0o777)
        let writable = try runGeomon(["validate", profile])
        #expect(writable.exitCode == 65)
        #expect(writable.stderr.contains("its directory \(directory.url.path) is group- or world-writable (mode 0777)"))
        chmod(directory.url.path, 0o1777)
        let sticky = try runGeomon(["validate", profile])
        #expect(sticky.exitCode == 0, "\(sticky.stderr)")
    }

    @Test(.enabled(if: isRoot))
    func asRootSymlinksIntoAnotherUsersPlaceAreRefused() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        // zones.geojson -> elsewhere/zones.geojson, where 'elsewhere' belongs to another user.
        let elsewhere = directory.path("elsewhere")
        mkdir(elsewhere, 0o755)
        _ = try directory.write("elsewhere/zones.geojson", Self.geojson, mode: 0o644)
        unlink(directory.path("zones.geojson"))
        symlink("elsewhere/zones.geojson", directory.path("zones.geojson"))
        #expect(try runGeomon(["validate", profile]).exitCode == 0)
        chown(elsewhere, Self.otherUID, 0)
        let through = try runGeomon(["validate", profile])
        #expect(through.exitCode == 65)
        #expect(through.stderr.contains("GeoJSON file 'zones.geojson': its directory \(elsewhere) is owned by uid 4242, not root"))
        // A symlink owned by another user is refused even when its target is root's.
        chown(elsewhere, 0, 0)
        lchown(directory.path("zones.geojson"), Self.otherUID, 0)
        let link = try runGeomon(["validate", profile])
        #expect(link.exitCode == 65)
        #expect(link.stderr.contains("resolves through the symlink \(directory.path("zones.geojson")), owned by uid 4242"))
    }

    @Test(.enabled(if: isRoot))
    func asRootTheDatabaseDirectoryMustBeRoots() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        let data = directory.path("data")
        mkdir(data, 0o755)
        chown(data, Self.otherUID, 0)
        let track = TestSupport.fixture("replay/swiss-drive.jsonl").path
        let result = try runGeomon(["replay", "--profile", profile, track, "--db", data + "/x.db", "--no-hooks"])
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("geomon: error: database directory '\(data)': it is owned by uid 4242, not root"))
        #expect(!FileManager.default.fileExists(atPath: data + "/x.db"))
        let overridden = try runGeomon(["replay", "--profile", profile, track, "--db", data + "/x.db", "--no-hooks", "--insecure-permissions"])
        #expect(overridden.exitCode == 0, "\(overridden.stderr)")
    }

    /// A world-writable existing database is refused (anyone could rewrite events and queued
    /// hook argv).
    @Test func aWritableDatabaseIsRefused() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        let db = directory.path("x.db")
        let track = TestSupport.fixture("replay/swiss-drive.jsonl").path
        #expect(try runGeomon(["replay", "--profile", profile, track, "--db", db, "--no-hooks"]).exitCode == 0)
        chmod(db, 0o666)
        let result = try runGeomon(["replay", "--profile", profile, track, "--db", db, "--no-hooks"])
        #expect(result.exitCode == 1)
        #expect(result.stderr.contains("geomon: error: database '\(db)' is group- or world-writable (mode 0666)"))
    }

    // MARK: hook environment

    /// The environment a real hook sees through `geomon hooks fire`: only the documented
    /// variables, nothing inherited from geomon's own environment.
    @Test func aHookSeesOnlyTheDocumentedEnvironment() throws {
        let (directory, profile) = try Self.setUp()
        defer { directory.remove() }
        let result = try runProcess(TestSupport.geomonBinary, ["hooks", "fire", "--profile", profile, "--event", "enter", "--fence", "a"],
                                    environment: ["PATH": "/usr/bin:/bin", "SECRET_TOKEN": "x", "LD_PRELOAD": "/nonexistent.so", "HOME": "/root", "IFS": ":"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let env = try String(contentsOfFile: directory.path("env.txt"), encoding: .utf8)
        let names = Set(env.split(separator: "\n").compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        let documented: Set = ["PATH", "LANG", "HOME", "PWD", "SHLVL", "_",
                               "GEOMON_EVENT", "GEOMON_EVENT_ID", "GEOMON_FENCE", "GEOMON_FENCE_NAME", "GEOMON_TIME",
                               "GEOMON_LAT", "GEOMON_LON", "GEOMON_ACCURACY_M", "GEOMON_PROFILE", "GEOMON_ATTEMPT", "GEOMON_TEST"]
        // PWD, SHLVL and _ are set by /bin/sh itself, not passed by geomon.
        #expect(names.isSubset(of: documented), "unexpected: \(names.subtracting(documented))")
        #expect(env.contains("PATH=/usr/local/bin:/usr/bin:/bin\n"))
        #expect(!env.contains("SECRET_TOKEN"))
        #expect(!env.contains("LD_PRELOAD"))
    }
}
