import Foundation
import GeomonTestSupport
import Testing

/// `geomon fences`: the listing, and a GeoJSON export that is exactly what geomon monitors.
struct FencesCommandTests {
    static func setUp() throws -> (TemporaryDirectory, String) {
        let dir = try TemporaryDirectory()
        try FileManager.default.copyItem(at: TestSupport.fixture("geometry/defective/wellington-defective.geojson"),
                                         to: dir.url.appendingPathComponent("suburbs.geojson"))
        let profile = try dir.write("p.yaml", """
            version: 1
            name: wellington
            mode: regions
            sources: {gnss: {}}
            fences:
              - {id: zoo, name: Zoo, circle: {lat: -41.3195, lon: 174.7848, radius: 250m}}
              - id: waterfront
                corridor: {points: [{lat: -41.2866, lon: 174.7756}, {lat: -41.2890, lon: 174.7790}, {lat: -41.2930, lon: 174.7840}], width: 120m}
              - {geojson: suburbs.geojson, id_property: name}

            """)
        return (dir, profile)
    }

    @Test func theTableAndJSONListEveryFence() throws {
        let (dir, profile) = try Self.setUp()
        defer { dir.remove() }
        let table = try runGeomon(["fences", "--profile", profile])
        #expect(table.exitCode == 0, "\(table.stderr)")
        #expect(table.stdout.hasSuffix("11 fences\nplanned for any (policy.max_speed and max_acceleration): max_speed 30 m/s, max_acceleration 1 m/s²\n"))
        #expect(table.stdout.split(separator: "\n").filter { $0.hasSuffix("repaired") }.count == 6)
        // One line of warnings; `validate` lists them.
        #expect(table.stderr.contains("9 warnings in ") && table.stderr.contains("geomon validate "), "\(table.stderr)")
        let json = try runGeomon(["fences", "--profile", profile, "--format", "json"])
        let objects = try json.stdout.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(objects.map { $0["kind"] as? String } == ["circle", "corridor"] + Array(repeating: "polygon", count: 9))
        #expect(objects[0]["radius_m"] as? Double == 250 && objects[1]["width_m"] as? Double == 120)
        #expect(objects.filter { $0["repaired"] as? Bool == true }.compactMap { $0["id"] as? String }
                == ["Ohariu", "Ngaio", "Miramar", "Lyall Bay", "Rongotai", "Khandallah"])
        let area = try #require(objects[0]["area_m2"] as? Double)
        #expect(abs(area - Double.pi * 250 * 250) < 1)
    }

    /// Which fences report events at a given instant, and until when.
    @Test func theActiveColumnSaysWhichFencesReportNow() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try dir.write("p.yaml", """
            version: 1
            name: schools
            mode: regions
            timezone: Europe/Zurich
            sources: {gnss: {}}
            fences:
              - {id: school, circle: {lat: 47.37, lon: 8.54, radius: 120m}, active: [{days: mon-fri, from: "07:00", to: "09:00"}]}
              - {id: home, circle: {lat: 47.40, lon: 8.50, radius: 100m}}

            """)
        // Monday 2026-12-07 07:30 in Zurich (CET) is 06:30Z: open until 08:00Z.
        let open = try runGeomon(["fences", "--profile", profile, "--at", "2026-12-07T06:30:00Z"])
        #expect(open.exitCode == 0, "\(open.stderr)")
        let lines = open.stdout.split(separator: "\n")
        #expect(lines.first { $0.hasPrefix("school") }?.contains("yes until 2026-12-07T08:00:00Z") == true, "\(open.stdout)")
        #expect(lines.first { $0.hasPrefix("home") }?.contains("  -  ") == true)
        // Saturday: closed until Monday 06:00Z.
        let json = try runGeomon(["fences", "--profile", profile, "--at", "2026-12-05T12:00:00Z", "--format", "json"])
        let school = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.split(separator: "\n")[0].utf8)) as? [String: Any])
        #expect(school["active"] as? Bool == false && school["active_changes"] as? String == "2026-12-07T06:00:00Z")
        let bad = try runGeomon(["fences", "--profile", profile, "--at", "monday"])
        #expect(bad.exitCode == 64 && bad.stderr.contains("'--at' must be an RFC 3339 time"))
    }

    /// The export, read back as a fence file, answers the points of the shapely fixture as the
    /// profile does.
    @Test func theGeoJSONExportIsWhatIsMonitored() throws {
        let (dir, profile) = try Self.setUp()
        defer { dir.remove() }
        let export = try runGeomon(["fences", "--profile", profile, "--format", "geojson"])
        #expect(export.exitCode == 0, "\(export.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(export.stdout.utf8)) as? [String: Any])
        #expect((root["features"] as? [Any])?.count == 11)
        _ = try dir.write("export.geojson", export.stdout)
        let again = try dir.write("again.yaml", """
            version: 1
            name: again
            mode: regions
            sources: {gnss: {}}
            fences:
              - {geojson: export.geojson, width_property: width_m}

            """)
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: TestSupport.fixture("geometry/defective/wellington-defective.expected.json"))) as? [String: Any])
        let points = try #require(expected["points"] as? [[String: Any]])
        var input = points.map { "\($0["lat"]!) \($0["lon"]!)" }
        // Along the corridor and across it, 30 and 90 m from its line.
        input += ["-41.2878 174.7773", "-41.2910 174.7815", "-41.28775 174.77800", "-41.2870 174.7790"]
        let stdin = input.joined(separator: "\n") + "\n"
        let original = try runGeomon(["query", "--profile", profile], stdin: stdin)
        let exported = try runGeomon(["query", "--profile", again], stdin: stdin)
        #expect(original.exitCode == 0 && exported.exitCode == 0, "\(exported.stderr)")
        func inside(_ text: String) throws -> [[String]] {
            try text.split(separator: "\n").map { line in
                let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                return (o["inside"] as? [String] ?? []).filter { $0 != "zoo" }
            }
        }
        #expect(try inside(original.stdout) == inside(exported.stdout))
        #expect(try inside(original.stdout).filter { !$0.isEmpty }.count > 50)
    }

    /// `--format otrw`: the circles as an OwnTracks export, which a `file:` entry reads back
    /// with the same ids, names, centres and radii; the table says where each fence came from.
    @Test func theOwnTracksExportReadsBackAsTheSameCircles() throws {
        let (dir, _) = try Self.setUp()
        defer { dir.remove() }
        try FileManager.default.copyItem(at: TestSupport.fixture("places/ha-ludeeus-packages-zones.yaml"), to: dir.url.appendingPathComponent("zones.yaml"))
        _ = try dir.write("secrets.yaml", "zone_home_lat: -41.29\nzone_home_lon: 174.78\nzone_work_lat: -41.28\nzone_work_lon: 174.77\n")
        let profile = try dir.write("zones.yaml.profile", """
            version: 1
            name: zones
            mode: regions
            sources: {gnss: {}}
            fences:
              - {id: zoo, name: Zoo, circle: {lat: -41.3195, lon: 174.7848, radius: 250m}}
              - file: zones.yaml
              - id: waterfront
                corridor: {points: [{lat: -41.2866, lon: 174.7756}, {lat: -41.2890, lon: 174.7790}], width: 120m}

            """)
        let table = try runGeomon(["fences", "--profile", profile])
        #expect(table.exitCode == 0, "\(table.stderr)")
        let rows = table.stdout.split(separator: "\n")
        #expect(rows.first?.contains("source") == true)
        #expect(rows.contains { $0.hasPrefix("zoo ") && $0.contains("zones.yaml.profile:6") })
        #expect(rows.contains { $0.hasPrefix("work ") && $0.contains("zones.yaml:16") })
        let export = try runGeomon(["fences", "--profile", profile, "--format", "otrw"])
        #expect(export.exitCode == 0, "\(export.stderr)")
        #expect(export.stderr.contains("1 of 4 fences are not circles"))
        _ = try dir.write("export.otrw", export.stdout)
        let again = try dir.write("again.yaml", """
            version: 1
            name: again
            mode: regions
            sources: {gnss: {}}
            fences:
              - file: export.otrw

            """)
        let original = try runGeomon(["fences", "--profile", profile, "--format", "json"])
        let back = try runGeomon(["fences", "--profile", again, "--format", "json"])
        #expect(back.exitCode == 0, "\(back.stderr)")
        func circles(_ text: String) throws -> [String] {
            try text.split(separator: "\n").compactMap { line in
                let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                guard o["kind"] as? String == "circle" else { return nil }
                return "\(o["id"]!) \(o["name"] ?? "") \(o["bbox"]!) \(o["radius_m"]!)"
            }
        }
        #expect(try circles(back.stdout) == circles(original.stdout))
        #expect(try circles(back.stdout).count == 3)
    }

    /// Across the antimeridian the box is RFC 7946's: west edge greater than the east edge,
    /// every longitude within ±180.
    @Test func boxesAcrossTheAntimeridianAreWrittenWestToEast() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try dir.write("fiji.yaml", """
            version: 1
            name: fiji
            mode: regions
            sources: {gnss: {}}
            fences:
              - id: fiji
                polygon: [{lat: -17, lon: 179.9}, {lat: -17, lon: -179.9}, {lat: -16.9, lon: -179.9}, {lat: -16.9, lon: 179.9}]
              - id: c
                circle: {lat: -17, lon: 179.999, radius: 1km}

            """)
        let result = try runGeomon(["fences", "--profile", profile, "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        var boxes: [String: [Double]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            boxes[try #require(o["id"] as? String)] = try #require(o["bbox"] as? [Double])
        }
        #expect(boxes["fiji"] == [179.9, -17, -179.9, -16.9])
        let circle = try #require(boxes["c"])
        #expect(circle[0] > 179.98 && circle[0] < 179.999 && circle[2] < -179.99 && circle[2] > -180)
    }

    @Test func aMissingOrInvalidProfileExits66Or65() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(try runGeomon(["fences", "--profile", dir.path("none.yaml")]).exitCode == 66)
        let bad = try dir.write("bad.yaml", "version: 1\nname: b\nmode: regions\nfences: [{id: x}]\n")
        #expect(try runGeomon(["fences", "--profile", bad]).exitCode == 65)
        #expect(try runGeomon(["fences"]).exitCode == 64)
    }

    /// Another profile's database: `fences --db` refuses the pair, as `run` and `replay` do,
    /// instead of listing that profile's placed fences under this one.
    @Test func anotherProfilesDatabaseIsRefused() throws {
        let (dir, profile) = try Self.setUp()
        defer { dir.remove() }
        let db = dir.path("other.db")
        let other = try dir.write("other.yaml", "version: 1\nname: other\nmode: continuous\nsources: {gnss: {}}\nfences: [{id: a, circle: {lat: 46, lon: 7, radius: 100m}}]\n")
        let replay = try runGeomon(["replay", "--profile", other, "--db", db, "--no-hooks", TestSupport.fixture("replay/swiss-drive.jsonl").path])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        let result = try runGeomon(["fences", "--profile", profile, "--db", db])
        #expect(result.exitCode == 65 && result.stderr.hasSuffix("geomon: error: \(db): the database belongs to profile 'other', not 'wellington'\n"), "\(result.stderr)")
        #expect(try runGeomon(["fences", "--profile", other, "--db", db]).exitCode == 0)
    }
}
