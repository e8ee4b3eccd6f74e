import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// `approach`, `dwell: {after, every}`, `transitions.confirm: {fixes, time}` and `defaults:` as
/// the loader reads and checks them.
struct TimeRulesConfigTests {
    static func load(_ body: String) -> ProfileLoadResult {
        let text = "version: 1\nname: p\nmode: regions\nsources: {gnss: {}}\n" + body
        return ProfileLoader.load(bytes: Array(text.utf8), path: "/tmp/time-rules.yaml")
    }

    static func errors(_ body: String) -> [String] {
        load(body).diagnostics.filter { $0.severity == .error }.map { "\($0.location?.line ?? 0):\($0.location?.column ?? 0) \($0.message)" }
    }

    static let circle = "circle: {lat: 46, lon: 7, radius: 100m}"

    @Test func approachBandsAreReadLargestFirst() throws {
        let profile = try #require(Self.load("fences:\n  - {id: a, \(Self.circle), approach: [200m, 5km, 1km]}\n").profile)
        let approach = try #require(profile.fences[0].approach)
        #expect(approach.bandsMeters == [5000, 1000, 200])
        #expect(approach.resetMeters == nil && approach.reset(forBand: 5000) == 1000 && approach.reset(forBand: 200) == 100)
        let full = try #require(Self.load("fences:\n  - {id: a, \(Self.circle), approach: {bands: [1km], reset: 50m, window: 30s, min_speed: 2km/h}}\n").profile)
        let settings = try #require(full.fences[0].approach)
        #expect(settings.resetMeters == 50 && settings.window == .seconds(30) && abs(settings.minSpeedMetersPerSecond - 2 / 3.6) < 1e-9)
    }

    @Test func etaBandsAreReadLargestFirstBesideDistances() throws {
        let profile = try #require(Self.load("fences:\n  - {id: a, \(Self.circle), approach: {eta: [2m, 10m]}}\n").profile)
        let approach = try #require(profile.fences[0].approach)
        #expect(approach.etaBands == [.seconds(600), .seconds(120)] && approach.bandsMeters.isEmpty)
        let both = try #require(Self.load("fences:\n  - {id: a, \(Self.circle), approach: {bands: [1km], eta: [5m]}}\n").profile)
        #expect(both.fences[0].approach?.bandCount == 2)
    }

    /// One `approach:` on a file of zones applies to every zone; `overrides:` gives one zone
    /// its own rules (Home Assistant's zones, from the file people keep them in).
    @Test func aFileEntrysOverridesGiveOneFenceItsOwnRules() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.copyItem(at: TestSupport.fixture("places/ha-ludeeus-packages-zones.yaml"), to: dir.url.appendingPathComponent("zones.yaml"))
        _ = try dir.write("secrets.yaml", "zone_home_lat: 46.31\nzone_home_lon: 6.94\nzone_work_lat: 46.32\nzone_work_lon: 6.95\n")
        func load(_ overrides: String) throws -> ProfileLoadResult {
            let path = try dir.write("p.yaml", """
                version: 1
                name: p
                mode: regions
                sources: {gnss: {}}
                fences:
                  - file: zones.yaml
                    approach: {bands: [1km]}
                    overrides:
                \(overrides)

                """)
            return try ProfileLoader.load(path: path)
        }
        let result = try load("      home: {approach: {eta: [10m, 2m]}}\n      work: {events: [enter, exit, dwell], dwell: 8h}")
        #expect(!result.hasErrors, "\(result.diagnostics)")
        let fences = try #require(result.profile).fences
        let home = try #require(fences.first { $0.id == "home" })
        let work = try #require(fences.first { $0.id == "work" })
        #expect(home.approach?.etaBands == [.seconds(600), .seconds(120)] && home.approach?.bandsMeters == [])
        #expect(work.approach?.bandsMeters == [1000] && work.dwell == .seconds(8 * 3600) && work.events.contains(.dwell))
        #expect(fences.filter { $0.id != "home" && $0.id != "work" }.allSatisfy { $0.approach?.bandsMeters == [1000] })
        // A name that is no fence of the file is an error where it is written.
        let typo = try load("      hoem: {approach: {eta: [10m]}}")
        #expect(typo.diagnostics.contains { $0.severity == .error && $0.message.hasPrefix("'overrides' names 'hoem', which is not a fence of 'zones.yaml'") && $0.location?.line == 9 })
    }

    /// Fences from a Home Assistant zone file (YAML, or the UI's `.storage/zone`) are zones
    /// Home Assistant has: `waypoints` defaults to false, so they are not imported back as
    /// "USER DEVICE - NAME" zones; said explicitly, it stays.
    @Test func homeAssistantZonesAreNotPublishedBackAsWaypoints() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.path(".storage"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: TestSupport.fixture("places/ha-3nm1-storage-zone.json"), to: dir.url.appendingPathComponent(".storage/zone"))
        func waypoints(_ fences: String, _ mqtt: String = "") throws -> Bool? {
            let path = try dir.write("p.yaml", "version: 1\nname: van\nmode: regions\nsources: {gnss: {}}\nfences:\n\(fences)\n"
                                     + "publish:\n  mqtt: {host: 127.0.0.1, topic: owntracks/van/geomon, tracker_id: v1\(mqtt)}\n")
            let result = try ProfileLoader.load(path: path)
            #expect(!result.hasErrors, "\(result.diagnostics)")
            return result.profile?.publish.mqtt?.waypoints
        }
        #expect(try waypoints("  - file: .storage/zone") == false)
        #expect(try waypoints("  - file: .storage/zone", ", waypoints: true") == true)
        #expect(try waypoints("  - {id: a, circle: {lat: 56.6, lon: 16.4, radius: 100m}}") == true)
    }

    @Test func badApproachesAreErrorsWhereTheyAre() {
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), approach: {reset: 1km}}\n")
            == ["6:64 'approach' needs 'bands' (distances from the boundary, e.g. [5km, 1km]) or 'eta' (times to arrival, e.g. [10m, 2m])"])
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), approach: {eta: [2d]}}\n") == ["6:71 an 'eta' band must be at most 1d (got 2d)"])
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), approach: {eta: [10m, 600s]}}\n") == ["6:76 eta band 600s is listed twice"])
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), approach: []}\n") == ["6:64 'bands' must list 1 to 16 distances from the boundary, e.g. [5km, 1km, 200m] (got 0)"])
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), approach: [1km, 1000m]}\n") == ["6:70 band 1000m is listed twice"])
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), approach: [1kg]}\n").first?.contains("unknown unit 'kg' in 'bands'") == true)
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), approach: {bands: [1km], window: 1s}}\n") == ["6:87 'window' must be between 2s and 1h (got 1s)"])
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), events: [enter, approach]}\n").first?.contains("'approach' is not listed in 'events'") == true)
    }

    @Test func aRepeatedDwellIsRead() throws {
        let profile = try #require(Self.load("fences:\n  - {id: a, \(Self.circle), events: [dwell], dwell: {after: 2h, every: 1h}}\n").profile)
        #expect(profile.fences[0].dwell == .seconds(7200) && profile.fences[0].dwellEvery == .seconds(3600))
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), events: [dwell], dwell: {after: 2h, every: 10s}}\n")
            == ["6:97 'every' must be at least 1m (got 10s): a dwell repeats at most once a minute"])
        #expect(Self.errors("fences:\n  - {id: a, \(Self.circle), events: [dwell], dwell: {every: 1h}}\n") == ["6:78 missing required key 'after' in 'dwell'"])
    }

    @Test func confirmationByTimeIsRead() throws {
        let both = try #require(Self.load("transitions: {confirm: {fixes: 3, time: 30s}}\n").profile)
        #expect(both.transitions.confirm == 3 && both.transitions.confirmTime == .seconds(30))
        let time = try #require(Self.load("transitions: {confirm: {time: 45s}}\n").profile)
        #expect(time.transitions.confirm == 1 && time.transitions.confirmTime == .seconds(45))
        #expect(Self.errors("transitions: {confirm: {}}\n") == ["5:24 'transitions.confirm' needs 'fixes', 'time' or both, e.g. {fixes: 2, time: 30s}"])
        #expect(Self.errors("transitions: {confirm: {time: 2d}}\n") == ["5:31 'time' is too large (at most 24h; got 2d)"])
    }

    @Test func approachHooksWithoutApproachBandsAreAWarning() {
        let result = Self.load("fences:\n  - {id: a, \(Self.circle)}\nhooks:\n  approach: [{exec: [/bin/true]}]\n")
        #expect(result.diagnostics.map(\.message) == ["'hooks.approach' is set but no fence has 'approach:'; these hooks never run"])
    }

    @Test func defaultsGoToEveryFenceThatDoesNotSetItsOwn() throws {
        let body = """
            defaults: {events: [enter, exit, dwell], dwell: 10m, approach: [1km]}
            fences:
              - {id: a, \(Self.circle)}
              - {id: b, \(Self.circle), events: [enter], approach: [300m]}

            """
        let profile = try #require(Self.load(body).profile)
        #expect(profile.fences[0].events == [.enter, .exit, .dwell] && profile.fences[0].dwell == .seconds(600))
        #expect(profile.fences[0].approach?.bandsMeters == [1000])
        #expect(profile.fences[1].events == [.enter] && profile.fences[1].approach?.bandsMeters == [300])
    }
}

/// `active:` windows and `timezone:` as the loader reads and checks them.
struct ScheduleConfigTests {
    typealias R = TimeRulesConfigTests

    @Test func windowsAndTheZoneAreRead() throws {
        let body = """
            timezone: Europe/Zurich
            fences:
              - id: school
                \(R.circle)
                active: [{days: mon-fri, from: "07:00", to: "09:00"}, {days: [sat], from: "22:00", to: "06:00"}, {from: "12:00", to: "24:00"}]

            """
        let profile = try #require(R.load(body).profile, "\(R.load(body).diagnostics)")
        #expect(profile.timeZone.name == "Europe/Zurich")
        let schedule = try #require(profile.fences[0].active)
        let windows = schedule.windows
        #expect(windows == [FenceSchedule.Window(days: [0, 1, 2, 3, 4], start: 420, end: 540),
                            FenceSchedule.Window(days: [5], start: 1320, end: 360),
                            FenceSchedule.Window(days: Set(0..<7), start: 720, end: 0)])
        // A range may wrap the week.
        let wrap = try #require(R.load("fences:\n  - {id: a, \(R.circle), active: [{days: fri-mon, from: \"08:00\", to: \"10:00\"}]}\n").profile)
        #expect(wrap.fences[0].active?.windows.first?.days == [4, 5, 6, 0])
    }

    @Test func badWindowsAndZonesAreErrors() {
        #expect(R.errors("fences:\n  - {id: a, \(R.circle), active: [{days: mon-fry, from: \"07:00\", to: \"09:00\"}]}\n")
            == ["6:70 'days' must be mon … sun, a range such as mon-fri, weekdays, weekends or daily (got 'mon-fry'); did you mean 'mon-fri'?"])
        #expect(R.errors("fences:\n  - {id: a, \(R.circle), active: [{from: \"7\", to: \"09:00\"}]}\n").first?.contains("'from' must be a local time of day HH:MM") == true)
        #expect(R.errors("fences:\n  - {id: a, \(R.circle), active: [{from: \"24:00\", to: \"09:00\"}]}\n").first?.contains("'from' must be a local time of day") == true)
        #expect(R.errors("fences:\n  - {id: a, \(R.circle), active: [{from: \"09:00\", to: \"09:00\"}]}\n").first?.contains("the window is empty") == true)
        #expect(R.errors("fences:\n  - {id: a, \(R.circle), active: []}\n").first?.contains("'active' must list at least one window") == true)
        #expect(R.errors("timezone: Europe/Zurch\n") == ["5:11 unknown time zone 'Europe/Zurch': no /usr/share/zoneinfo/Europe/Zurch (the tzdata package has the time zone database)"])
        #expect(R.errors("timezone: ../etc/passwd\n").first?.contains("'timezone' must be a time zone name") == true)
    }
}
