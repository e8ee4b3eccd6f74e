import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// The profiles in `profiles/` are valid, free of warnings, and decode to what they say.
struct ShippedProfilesTests {
    static let names = ["fitness", "social-radar", "geofence-only"]

    static func load(_ name: String) throws -> ProfileLoadResult {
        try ProfileLoader.load(path: TestSupport.packageRoot.appendingPathComponent("profiles/\(name).yaml").path)
    }

    @Test(arguments: names)
    func shippedProfileIsValidWithoutWarnings(_ name: String) throws {
        let result = try Self.load(name)
        // What this machine lacks (no system bus for GeoClue) is said, and is not the profile's fault.
        let environmental = ["needs the D-Bus system bus", "needs GeoClue2, which is not installed"]
        #expect(result.diagnostics.map(\.description).filter { line in !environmental.contains { line.contains($0) } } == [])
        let profile = try #require(result.profile)
        #expect(profile.name == name)
        #expect(profile.path?.hasSuffix("/profiles/\(name).yaml") == true)
        for hook in profile.hooks.enter + profile.hooks.exit + profile.hooks.dwell + profile.hooks.location + profile.hooks.heartbeat {
            #expect(hook.exec.first?.hasPrefix("/") == true, "exec[0] is resolved to an absolute path")
        }
    }

    @Test func geofenceOnlyHasCirclesAPolygonWithAHoleAndGeoJSONFences() throws {
        let profile = try #require(try Self.load("geofence-only").profile)
        #expect(profile.mode == .regions)
        #expect(profile.sources.gnss?.minAccuracyMeters == 50)
        #expect(abs(profile.policy.maxSpeedMetersPerSecond - 130 / 3.6) < 1e-9)
        #expect(profile.fences.map(\.id) == ["aigle-depot", "aigle-junction", "aigle-yard", "bern-west", "vevey-a9", "martigny-north", "sion", "sierre-leuk"])
        let yard = try #require(profile.fences.first { $0.id == "aigle-yard" })
        guard case .polygons(let polygons) = yard.shape else {
            Issue.record("aigle-yard is not a polygon")
            return
        }
        #expect(polygons.count == 1 && polygons[0].holes.count == 1)
        #expect(yard.events == [.enter, .exit, .dwell])
        #expect(yard.dwell == .seconds(45))
        let depot = try #require(profile.fences.first)
        #expect(depot.shape == .circle(center: Coordinate(latitude: 46.31566, longitude: 6.93558), radiusMeters: 200))
        #expect(depot.events == [.exit])
        let sierre = try #require(profile.fences.last)
        #expect(sierre.location?.file.hasSuffix("fences/valais.geojson") == true)
        #expect(sierre.location?.line == 12)
        #expect(profile.storage.path?.hasSuffix("/profiles/state/geofence-only.db") == true)
        #expect(profile.hooks.retry.maxBackoff == .seconds(600))
    }

    @Test func fitnessHasHeartbeatAndNetworkCondition() throws {
        let profile = try #require(try Self.load("fitness").profile)
        #expect(profile.mode == .continuous)
        #expect(profile.hooks.heartbeatEvery == .seconds(900))
        #expect(profile.hooks.heartbeat.count == 1)
        #expect(profile.hooks.dwell.first?.when == HookConditions(network: true, externalPower: false))
        #expect(profile.hooks.dwell.first?.exec.last == "--summit")
        #expect(profile.transitions.initial == .report)
        #expect(profile.storage.keepFixes == .seconds(30 * 86400))
    }

    @Test func socialRadarIsCoarseOnly() throws {
        let profile = try #require(try Self.load("social-radar").profile)
        #expect(profile.mode == .significantChange)
        #expect(profile.sources.gnss == nil)
        #expect(profile.sources.coarse?.plugin == "geoclue")
        #expect(profile.sources.coarse?.geoclue?.accuracy == .city)
        #expect(profile.sources.coarse?.expectedAccuracyMeters == 6000)
        #expect(profile.significantChange.distanceMeters == 5000)
        #expect(profile.significantChange.minInterval == .seconds(600))
    }

    @Test func defaultsApplyWhenKeysAreLeftOut() throws {
        let text = "version: 1\nname: minimal\nmode: continuous\nsources: {gnss: {}}\n"
        let result = ProfileLoader.load(bytes: Array(text.utf8), path: "/tmp/minimal.yaml")
        let profile = try #require(result.profile)
        #expect(result.diagnostics.isEmpty)
        #expect(profile.sources.gnss?.host == "127.0.0.1")
        #expect(profile.sources.gnss?.port == 2947)
        #expect(profile.policy.minSleep == .seconds(10))
        #expect(profile.policy.maxSleep == .seconds(1800))
        #expect(profile.transitions.confirm == 2)
        #expect(profile.storage.path == nil)
        #expect(profile.directory == "/tmp")
    }

    @Test func exampleNotifyHookPrintsTheEnvironmentAndTheEvent() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path("notify.log")
        let hook = TestSupport.packageRoot.appendingPathComponent("profiles/hooks/notify.sh")
        let attributes = try FileManager.default.attributesOfItem(atPath: hook.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o755)
        let result = try runProcess(
            hook, ["--event=enter", "--log=\(log)"], stdin: #"{"event":"enter","fence":"home"}"#,
            // What a hook gets: nothing but these (docs/hooks.md, "Environment").
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "GEOMON_EVENT": "enter", "GEOMON_FENCE_ID": "home"]
        )
        #expect(result.exitCode == 0)
        #expect(result.stderr.contains("GEOMON_EVENT=enter\nGEOMON_FENCE_ID=home\n"))
        #expect(result.stderr.contains(#"stdin: {"event":"enter","fence":"home"}"#))
        #expect(result.stderr.contains("args: --event=enter --log=\(log)"))
        #expect(try String(contentsOfFile: log, encoding: .utf8) == result.stderr)
    }
}
