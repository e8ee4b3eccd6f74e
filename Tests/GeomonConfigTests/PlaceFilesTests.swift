import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// Fence files in the formats people keep places in, read from real files of other projects
/// (Tests/Fixtures/places/SOURCE.md); the expected places were read off the files by hand, and
/// each is checked by containment on points inside and outside it, through the index the
/// profile builds.
@Suite struct PlaceFilesTests {
    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: TestSupport.fixture("places/" + name)))
    }

    static func read(_ name: String, _ format: PlaceFileFormat, options: PlaceFiles.Options = .init(),
                     files: [String: String] = [:]) throws -> PlaceFileRead {
        PlaceFiles.read(try bytes(name), file: name, format: format, options: options) { files[$0].map { Array($0.utf8) } }
    }

    static func place(_ read: PlaceFileRead, _ id: String) throws -> PlaceRecord {
        try #require(read.places.first { $0.id == id }, "no place '\(id)' in \(read.places.map(\.id))")
    }

    /// A point `meters` from `c` towards the east (+) or west (−).
    static func east(of c: Coordinate, _ meters: Double) -> Coordinate {
        Geodesy.destination(from: c, bearingDegrees: meters >= 0 ? 90 : 270, distanceMeters: abs(meters))
    }

    /// Whether the index built from `places` puts `point` inside the place `id`.
    static func contains(_ read: PlaceFileRead, _ id: String, _ point: Coordinate) throws -> Bool {
        let index = FenceIndex(shapes: read.places.map(\.shape))
        let k = try #require(read.places.firstIndex { $0.id == id })
        return index.containing(point).contains(k)
    }

    static func circle(_ place: PlaceRecord) throws -> (center: Coordinate, radius: Double) {
        guard case let .circle(center, radius) = place.shape else { throw TestFailure("\(place.id) is a \(place.shape.kind), not a circle") }
        return (center, radius)
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ text: String) { description = text }
    }

    // MARK: Home Assistant

    @Test func homeAssistantZonesWithSecretsBesideThem() throws {
        let secrets = "zone_home_lat: 52.3792\nzone_home_lon: 4.9003\nzone_work_lat: 52.3380\nzone_work_lon: 4.8719\n"
        let read = try Self.read("ha-ludeeus-packages-zones.yaml", .homeassistant, files: ["secrets.yaml": secrets])
        #expect(read.diagnostics.filter { $0.severity == .error }.isEmpty, "\(read.diagnostics)")
        #expect(read.places.map(\.id) == ["home", "work"])
        #expect(read.places.map(\.name) == ["Home", "Work"])
        let work = try Self.circle(try Self.place(read, "work"))
        #expect(work.center == Coordinate(latitude: 52.3380, longitude: 4.8719) && work.radius == 120)
        #expect(try Self.contains(read, "work", Self.east(of: work.center, 100)))
        #expect(try !Self.contains(read, "work", Self.east(of: work.center, 140)))
        // CRLF line endings: positions are still lines of the file (the list starts on line 10).
        #expect(read.places[0].location.line == 10 && read.places[1].location.line == 16)
    }

    @Test func homeAssistantSecretsThatAreMissingAreErrorsAtTheirPlace() throws {
        let read = try Self.read("ha-devsecninja-integrations-zone.yaml", .homeassistant, files: [:])
        #expect(read.places.isEmpty)
        let errors = read.diagnostics.filter { $0.severity == .error }
        // Latitude and longitude of each of the four zones.
        #expect(errors.count == 8)
        let first = try #require(errors.first)
        #expect(first.location?.line == 3 && first.location?.column == 15)
        #expect(first.message == "zone 'Home': 'latitude' is '!secret zone_home_latitude', but secrets.yaml cannot be read")
        // A secrets file without the name: said so, naming both.
        let other = try Self.read("ha-devsecninja-integrations-zone.yaml", .homeassistant, files: ["secrets.yaml": "wifi_password: x\n"])
        #expect(other.diagnostics.first?.message == "zone 'Home': 'latitude' is '!secret zone_home_latitude', which secrets.yaml does not hold as a number")
        // With the secrets, every zone; Zandvoort's 1.6 km radius.
        let secrets = ["home", "office", "parents", "zandvoort"].enumerated().map { k, name in
            "zone_\(name)_latitude: \(52.0 + Double(k) * 0.1)\nzone_\(name)_longitude: \(4.5 + Double(k) * 0.1)\n"
        }.joined()
        let full = try Self.read("ha-devsecninja-integrations-zone.yaml", .homeassistant, files: ["secrets.yaml": secrets])
        #expect(full.places.map(\.id) == ["home", "office", "parents", "zandvoort"])
        let zandvoort = try Self.circle(try Self.place(full, "zandvoort"))
        #expect(zandvoort.radius == 1600)
        #expect(try Self.contains(full, "zandvoort", Self.east(of: zandvoort.center, -1500)))
        #expect(try !Self.contains(full, "zandvoort", Self.east(of: zandvoort.center, -1700)))
    }

    @Test func homeAssistantConfigurationWithTheHomeZoneIncludesAndDuplicates() {
        let configuration = """
        homeassistant:
          name: Casa
          latitude: 45.4642
          longitude: 9.19
          radius: 75
          unit_system: metric
        automation: !include automations.yaml
        zone: !include zones.yaml
        """
        let zones = """
        - name: Café Müller
          latitude: 45.47
          longitude: 9.2
        - name: Work Office
          latitude: 45.48
          longitude: 9.21
          radius: 250
          passive: true
        - name: Work-Office!
          latitude: 45.49
          longitude: 9.22
        - name: 办公室
          latitude: 45.5
          longitude: 9.23
        """
        let read = PlaceFiles.read(Array(configuration.utf8), file: "configuration.yaml", format: .homeassistant) { name in
            name == "zones.yaml" ? Array(zones.utf8) : nil
        }
        #expect(read.places.map(\.id) == ["home", "cafe_muller", "work_office", "work_office_2", "unknown"])
        // `zone.home` is "Home" in Home Assistant whatever `homeassistant: name` calls the place.
        #expect(read.places.map(\.name) == ["Home", "Café Müller", "Work Office", "Work-Office!", "办公室"])
        #expect(read.places[0].location.file == "configuration.yaml")
        #expect(read.places[1].location.file == "zones.yaml" && read.places[1].location.line == 1)
        if case let .circle(_, radius) = read.places[0].shape { #expect(radius == 75) } else { Issue.record("home is not a circle") }
        if case let .circle(_, radius) = read.places[1].shape { #expect(radius == 100) } else { Issue.record("a zone is not a circle") }
        #expect(read.diagnostics.contains { $0.severity == .warning && $0.message.contains("'work_office_2'") })
    }

    /// A numbered id another place already holds is skipped, so no place is dropped as a
    /// duplicate: a third `Work` beside a `Work 2` is `work_3`, as Home Assistant numbers its
    /// entity ids; a GPX `A (2)` beside two `A`s keeps every one.
    @Test func aNumberedIdAnotherPlaceHoldsIsSkipped() {
        let zones = """
        zone:
          - name: Work
            latitude: 45.48
            longitude: 9.21
          - name: Work 2
            latitude: 45.49
            longitude: 9.22
          - name: Work
            latitude: 45.5
            longitude: 9.23
        """
        let ha = PlaceFiles.read(Array(zones.utf8), file: "configuration.yaml", format: .homeassistant) { _ in nil }
        #expect(ha.places.map(\.id) == ["work", "work_2", "work_3"])
        #expect(ha.diagnostics.contains { $0.severity == .warning && $0.message.contains("'work_3'") })
        let gpx = """
        <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1">
        <wpt lat="1" lon="2"><name>A</name></wpt>
        <wpt lat="1" lon="2.01"><name>A</name></wpt>
        <wpt lat="1" lon="2.02"><name>A (2)</name></wpt>
        </gpx>
        """
        let read = PlaceFiles.read(Array(gpx.utf8), file: "places.gpx", format: .gpx) { _ in nil }
        #expect(read.places.map(\.id) == ["A", "A (2)", "A (2) (2)"])
        #expect(Set(read.places.map(\.id)).count == 3)
    }

    /// Zones made in Home Assistant's UI live in `.storage/zone` (JSON): read as the same
    /// format, found from the content (the file has no extension), ids as Home Assistant's.
    @Test func homeAssistantsZoneStorageIsReadToo() throws {
        let bytes = try Self.bytes("ha-3nm1-storage-zone.json")
        #expect(PlaceFileFormat.inferred(path: "zone.json", bytes: bytes) == .homeassistant)
        let read = PlaceFiles.read(bytes, file: ".storage/zone", format: .homeassistant)
        #expect(read.diagnostics.isEmpty, "\(read.diagnostics)")
        #expect(read.places.map(\.id) == ["evedal", "jobb"] && read.places.map(\.name) == ["Evedal", "Jobb"])
        #expect(read.places[1].location.line == 16)
        let jobb = try Self.circle(read.places[1])
        #expect(jobb.radius == 100 && abs(jobb.center.latitude - 56.979835682383275) < 1e-12)
    }

    /// As in Home Assistant, a zone named Home replaces the home zone of `homeassistant:`
    /// (one fence, not two concentric ones); a missing secret there is named where it is used.
    @Test func aZoneNamedHomeReplacesTheCoreHomeZone() throws {
        let configuration = """
        homeassistant:
          name: Zuhause
          latitude: 47.37
          longitude: 8.54
        zone:
          - name: Home
            latitude: 47.3701
            longitude: 8.5402
            radius: 40
          - name: Work
            latitude: 47.38
            longitude: 8.55
        """
        let read = PlaceFiles.read(Array(configuration.utf8), file: "configuration.yaml", format: .homeassistant)
        #expect(read.places.map(\.id) == ["home", "work"])
        #expect(read.places[0].location.line == 6)
        if case let .circle(_, radius) = read.places[0].shape { #expect(radius == 40) } else { Issue.record("home is not a circle") }
        let secret = """
        homeassistant:
          name: Zuhause
          latitude: !secret home_lat
          longitude: 8.54
        """
        let missing = PlaceFiles.read(Array(secret.utf8), file: "configuration.yaml", format: .homeassistant) { _ in Array("other: 1\n".utf8) }
        let error = try #require(missing.diagnostics.first { $0.severity == .error })
        #expect(error.location?.line == 3 && error.location?.column == 13)
        #expect(error.message == "the home zone: 'homeassistant: latitude' is '!secret home_lat', which secrets.yaml does not hold as a number")
    }

    @Test func aBadHomeZoneIsAnErrorAndAZoneNamedHomeIsCheckedLikeAnyZone() throws {
        // A home location out of range (or a radius that is no radius) is reported, and a
        // zone named Home is then a zone of its own, not an override of a place never kept.
        for core in ["latitude: 100\n  longitude: 10", "latitude: 47\n  longitude: 8\n  radius: -5"] {
            let text = "homeassistant:\n  \(core)\nzone:\n  - name: Home\n    latitude: 48.1\n    longitude: 11.5\n"
            let read = PlaceFiles.read(Array(text.utf8), file: "configuration.yaml", format: .homeassistant)
            #expect(read.diagnostics.contains { $0.severity == .error && $0.location?.line == 2 }, "\(read.diagnostics)")
            #expect(read.places.map(\.id) == ["home"])
            #expect(try Self.circle(read.places[0]).center == Coordinate(latitude: 48.1, longitude: 11.5))
        }
        // An override out of range or with a radius that is none is an error; home stays.
        for zone in ["latitude: 95\n    longitude: 8", "latitude: 47.1\n    longitude: 8\n    radius: -5"] {
            let text = "homeassistant:\n  latitude: 47\n  longitude: 8\nzone:\n  - name: Home\n    \(zone)\n"
            let read = PlaceFiles.read(Array(text.utf8), file: "configuration.yaml", format: .homeassistant)
            #expect(read.diagnostics.contains { $0.severity == .error && $0.message.hasPrefix("'home': ") }, "\(read.diagnostics)")
            #expect(try Self.circle(Self.place(read, "home")).center == Coordinate(latitude: 47, longitude: 8))
        }
    }

    @Test(arguments: [("Home", "home"), ("Work Office", "work_office"), ("Café Müller", "cafe_muller"), ("  --Zürich HB--  ", "zurich_hb"),
                      ("Straße 5", "strasse_5"), ("Ærøskøbing", "aeroskobing"), ("ŁÓDŹ", "lodz"), ("a__b", "a_b"), ("日本", "unknown"), ("", "unknown")])
    func homeAssistantSlugs(name: String, slug: String) {
        #expect(PlaceFiles.slug(name) == slug)
    }

    // MARK: OwnTracks

    @Test func ownTracksSetWaypointsCommand() throws {
        let read = try Self.read("owntracks-cmd-setWaypoints.json", .owntracks)
        // The follow region moves with the device: not a place.
        #expect(read.places.map(\.id) == ["TESTING-ID-1", "TESTING-ID-2"])
        #expect(read.places.map(\.name) == ["home", "work"])
        #expect(read.diagnostics.count == 1 && read.diagnostics[0].message.contains("+follow"))
        let work = try Self.circle(try Self.place(read, "TESTING-ID-2"))
        #expect(work.center == Coordinate(latitude: 37.3, longitude: -122.3) && work.radius == 100)
        #expect(try Self.contains(read, "TESTING-ID-2", Self.east(of: work.center, 90)))
        #expect(try !Self.contains(read, "TESTING-ID-2", Self.east(of: work.center, 110)))
        // Each place is where its waypoint object begins.
        #expect(read.places[0].location.line == 16)
    }

    @Test func ownTracksSingleWaypointsAndEmptyAndDeleteCommands() throws {
        let android = try Self.read("owntracks-android-waypoint_message.json", .owntracks)
        #expect(android.places.map(\.id) == ["mypoint"])
        let mypoint = try Self.circle(android.places[0])
        #expect(mypoint.center == Coordinate(latitude: 52.0027789, longitude: -1.0829312) && mypoint.radius == 150)
        let circular = try Self.read("owntracks-waypoint-circular.json", .owntracks)
        #expect(circular.places.map(\.id) == ["feca26"] && circular.places.map(\.name) == ["here"])
        #expect(try Self.read("owntracks-android-cmd_set_waypoints.json", .owntracks).places.isEmpty)
        #expect(try Self.read("owntracks-waypoints-follow-only.json", .owntracks).places.isEmpty)
        // A deletion: no region, and a position out of range.
        let delete = try Self.read("owntracks-cmd-setWaypoints-delete.json", .owntracks)
        #expect(delete.places.isEmpty && delete.diagnostics.contains { $0.message.contains("no region") })
    }

    @Test func ownTracksInvalidJSONIsAnErrorAtItsPosition() throws {
        let read = try Self.read("owntracks-cmd-setWaypoints-illegal.json", .owntracks)
        #expect(read.places.isEmpty)
        let error = try #require(read.diagnostics.first)
        #expect(error.severity == .error && error.message.contains("leading zero"))
        #expect(error.location?.line == 14 && error.location?.column == 12)
    }

    // MARK: KML and KMZ

    @Test func myMapsExportPoint() throws {
        let read = try Self.read("kml-mymaps-google-export.kml", .kml)
        #expect(read.places.map(\.id) == ["place"])
        let place = try Self.circle(read.places[0])
        #expect(place.center == Coordinate(latitude: 45.5141361, longitude: -122.65347) && place.radius == 100)
        var options = PlaceFiles.Options()
        options.radius = 40
        #expect(try Self.circle(try Self.read("kml-mymaps-google-export.kml", .kml, options: options).places[0]).radius == 40)
    }

    @Test func kmlPolygonWithAHole() throws {
        let read = try Self.read("kml-togeojson-polygon.kml", .kml)
        #expect(read.places.map(\.id) == ["hollow box"])
        guard case let .polygons(members) = read.places[0].shape else { throw TestFailure("not a polygon") }
        #expect(members.count == 1 && members[0].holes.count == 1 && members[0].shell.count == 5)
        #expect(members[0].shell[0] == Coordinate(latitude: 37.818844, longitude: -122.366278))
        // Between the rings: inside; in the hole and beyond the shell: outside.
        #expect(try Self.contains(read, "hollow box", Coordinate(latitude: 37.81890, longitude: -122.36620)))
        #expect(try !Self.contains(read, "hollow box", Coordinate(latitude: 37.81935, longitude: -122.36596)))
        #expect(try !Self.contains(read, "hollow box", Coordinate(latitude: 37.8185, longitude: -122.3663)))
    }

    @Test func kmlLinesAreCorridors() throws {
        var options = PlaceFiles.Options()
        options.width = 20
        let read = try Self.read("kml-togeojson-linestring.kml", .kml, options: options)
        #expect(read.places.map(\.id) == ["unextruded", "extruded"])
        guard case let .corridor(lines, width) = read.places[0].shape else { throw TestFailure("not a corridor") }
        #expect(width == 20 && lines == [[Coordinate(latitude: 37.824664, longitude: -122.364383), Coordinate(latitude: 37.824322, longitude: -122.364152)]])
        let middle = Coordinate(latitude: (37.824664 + 37.824322) / 2, longitude: (-122.364383 + -122.364152) / 2)
        #expect(try Self.contains(read, "unextruded", Self.east(of: middle, 5)))
        #expect(try !Self.contains(read, "unextruded", Self.east(of: middle, 30)))
    }

    @Test func kmlSchemaDataPoints() throws {
        let read = try Self.read("kml-togeojson-simpledata.kml", .kml)
        #expect(read.places.map(\.id) == ["Easy trail", "Difficult trail"])
        #expect(try Self.circle(read.places[0]).center == Coordinate(latitude: 37.002, longitude: -122.0))
        #expect(try Self.circle(read.places[1]).center == Coordinate(latitude: 37.0078, longitude: -121.998))
    }

    @Test func kmzArchivesAreUnzipped() throws {
        let capitals = try Self.read("kml-leafletkmz-capitals.kmz", .kmz)
        #expect(capitals.diagnostics.isEmpty, "\(capitals.diagnostics)")
        #expect(capitals.places.count == 5)
        #expect(Set(capitals.places.map(\.id)).isSuperset(of: ["Atene", "Berlino", "Madrid"]))
        let berlin = try Self.circle(try Self.place(capitals, "Berlino"))
        #expect(berlin.center == Coordinate(latitude: 52.520031, longitude: 13.404782))
        #expect(capitals.places[0].location.file == "kml-leafletkmz-capitals.kmz/doc.kml")
        // A MultiGeometry of two polygons (one with a hole), a placemark without a name.
        let multi = try Self.read("kml-leafletkmz-multigeometry.kmz", .kmz)
        #expect(multi.places.map(\.id) == ["placemark 1"])
        guard case let .polygons(members) = multi.places[0].shape else { throw TestFailure("not polygons") }
        #expect(members.count == 2 && members.map(\.holes.count).reduce(0, +) == 1)
        #expect(try Self.contains(multi, "placemark 1", Coordinate(latitude: 41.6, longitude: 6.2)))
        #expect(try !Self.contains(multi, "placemark 1", Coordinate(latitude: 43.5, longitude: 6.5)))
    }

    /// A small archive cannot get round the 64 MiB a place file may be by expanding: a member
    /// larger than that is refused before it is inflated.
    @Test func aKMZMemberLargerThanAPlaceFileMayBeIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let kmz = dir.path("bomb.kmz")
        let script = """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("doc.kml", '<kml><Placemark><name>a</name><Point><coordinates>8,47</coordinates></Point></Placemark>' + ' ' * (65 << 20) + '</kml>')
            """
        let made = try runProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, kmz])
        #expect(made.exitCode == 0, "\(made.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: kmz)))
        #expect(bytes.count < 1 << 20)
        let read = PlaceFiles.read(bytes, file: "bomb.kmz", format: .kmz, options: .init()) { _ in nil }
        #expect(read.places.isEmpty)
        #expect(read.diagnostics.contains { "\($0)".contains("more than the 64 MiB a member may") }, "\(read.diagnostics)")
    }

    /// A KML file declared ISO-8859-1 or windows-1252 (older Windows tools) is read as written:
    /// its names, and the ids made from them, are not mangled into replacement characters.
    @Test(arguments: [("ISO-8859-1", [UInt8]([0x43, 0x61, 0x66, 0xE9]), "Café"), ("windows-1252", [0x80, 0x20, 0x7A, 0x6F, 0x6E, 0x65], "€ zone")])
    func aKMLInALatinEncodingIsReadAsWritten(_ encoding: String, _ name: [UInt8], _ expected: String) throws {
        let head = Array("<?xml version=\"1.0\" encoding=\"\(encoding)\"?>\n<kml><Document>\n<Placemark><name>".utf8)
        let tail = Array("</name><Point><coordinates>8,47</coordinates></Point></Placemark>\n<Placemark><name>".utf8)
        let second = name.dropLast() + [0xE8]
        let end = Array("</name><Point><coordinates>9,47</coordinates></Point></Placemark>\n</Document></kml>\n".utf8)
        let read = PlaceFiles.read(head + name + tail + second + end, file: "latin.kml", format: .kml, options: .init()) { _ in nil }
        #expect(read.diagnostics.isEmpty, "\(read.diagnostics)")
        #expect(read.places.map(\.id) == [expected, String(expected.dropLast()) + "è"])
        // The second placemark keeps its line: lines and columns are the file's.
        #expect(read.places.last?.location.line == 4)
        // A UTF-8 byte order mark says UTF-8, whatever the declaration says (a file re-saved).
        let utf8 = [0xEF, 0xBB, 0xBF] + head + Array(expected.utf8) + tail + Array("x".utf8) + end
        let bom = PlaceFiles.read(utf8, file: "bom.kml", format: .kml, options: .init()) { _ in nil }
        #expect(bom.diagnostics.isEmpty && bom.places.map(\.id) == [expected, "x"], "\(bom.diagnostics) \(bom.places.map(\.id))")
    }

    // MARK: GPX
    // MARK: GPX
    // MARK: GPX

    @Test func gpxWaypointsWithGarminProximity() throws {
        let garmin = try Self.read("gpx-dartgpx-ext_garmin_full.gpx", .gpx)
        let first = try #require(garmin.places.first)
        let circle = try Self.circle(first)
        // gpxx:Proximity (100) comes before wptx1:Proximity (101) in the file.
        #expect(circle.center == Coordinate(latitude: 1, longitude: 2) && circle.radius == 100)
        // A BaseCamp export (byte order mark, CRLF), no proximity: the default radius.
        var options = PlaceFiles.Options()
        options.radius = 250
        let basecamp = try Self.read("gpx-gpsbabel-basecamp.gpx", .gpx, options: options)
        #expect(basecamp.places.map(\.id) == ["Hwy 119", "Hwy 72"])
        let hwy = try Self.circle(basecamp.places[0])
        #expect(hwy.center == Coordinate(latitude: 39.97386971488595, longitude: -105.46585036441684) && hwy.radius == 250)
        #expect(try Self.contains(basecamp, "Hwy 119", Self.east(of: hwy.center, 240)))
        #expect(try !Self.contains(basecamp, "Hwy 119", Self.east(of: hwy.center, 260)))
    }

    // MARK: Traccar

    /// traccar/traccar's geofence tests: each WKT area with the points they find inside and
    /// outside (`containsPoint`), as Traccar's API would list them.
    static let traccar: [(area: String, distance: Double?, inside: [Coordinate], outside: [Coordinate])] = [
        ("CIRCLE (55.75414 37.6204, 100)", nil, [.init(latitude: 55.75477, longitude: 37.62025)], [.init(latitude: 55.75545, longitude: 37.61921)]),
        ("POLYGON ((55.75474 37.61823, 55.75513 37.61888, 55.7535 37.6222, 55.75315 37.62165))", nil,
         [.init(latitude: 55.75476, longitude: 37.61915)], [.init(latitude: 55.75545, longitude: 37.61921)]),
        ("POLYGON ((66.9494 179.838, 66.9508 -179.8496, 66.8406 -180.0014))", nil,
         [.init(latitude: 66.9015, longitude: -180.0096 + 360), .init(latitude: 66.9015, longitude: 179.991)], [.init(latitude: 66.8368, longitude: -179.8792)]),
        ("POLYGON ((51.1966 -0.6207, 51.1897 0.4147, 50.9377 0.5136, 50.8675 -0.6082))", nil,
         [.init(latitude: 51.0466, longitude: -0.0165), .init(latitude: 51.0466, longitude: 0.018)], [.init(latitude: 50.9477, longitude: 0.5836)]),
        ("POLYGON((-23.559204099194772 148.8653145299711, -23.6000443437826 148.85956016213583, -23.600411843430095 148.89462111436828, -23.5626384786532 148.90278297873897, -23.5574863232753 148.88137329347367, -23.559204099194772 148.8653145299711))",
         nil, [], []),
        ("LINESTRING (56.83777 60.59833, 56.83766 60.5968)", 35, [.init(latitude: 56.83801, longitude: 60.59748)], []),
        ("LINESTRING (56.83777 60.59833, 56.83766 60.5968)", 15, [], [.init(latitude: 56.83801, longitude: 60.59748)]),
        ("LINESTRING (56.836 60.6126, 56.8393 60.6114, 56.83887 60.60811, 56.83782 60.5988)", 15,
         [.init(latitude: 56.83847, longitude: 60.60458)], [.init(latitude: 56.83764, longitude: 60.59725), .init(latitude: 56.83861, longitude: 60.60822)]),
        ("LINESTRING (66.9494 179.838, 66.9508 -179.8496)", 25,
         [.init(latitude: 66.95, longitude: 180.0)], [.init(latitude: 66.96, longitude: 180.0), .init(latitude: 66.9509, longitude: -179.83)]),
    ]

    @Test func badEntriesInKMLAndTraccarAreErrorsNotCrashesNorSilentDrops() throws {
        // A KML Point with two tuples: an error naming it; the other placemark is kept.
        let kml = """
        <kml xmlns="http://www.opengis.net/kml/2.2"><Document>
        <Placemark><name>twopoint</name><Point><coordinates>11.5,48.1 11.6,48.2</coordinates></Point></Placemark>
        <Placemark><name>keep</name><Point><coordinates>11.5,48.1</coordinates></Point></Placemark>
        </Document></kml>
        """
        let k = PlaceFiles.read(Array(kml.utf8), file: "b.kml", format: .kml)
        #expect(k.diagnostics.contains { $0.severity == .error && $0.message == "'twopoint': a Point has one lon,lat tuple (this one has 2)" }, "\(k.diagnostics)")
        #expect(k.places.map(\.id) == ["keep"])
        // Traccar: an unnamed geofence whose id is no integer is numbered by its place; a
        // longitude far past ±180 (a lost decimal point) is out of range, not wrapped.
        let traccar = #"[{"id": 1e20, "name": "", "area": "CIRCLE (48.1 11.5, 100)"}, {"name": "typo", "area": "CIRCLE (48.1 1150, 100)"}]"#
        let t = PlaceFiles.read(Array(traccar.utf8), file: "g.json", format: .traccar)
        #expect(t.places.map(\.name) == ["geofence 1"])
        #expect(t.diagnostics.contains { $0.severity == .error && $0.message.contains("out of range") }, "\(t.diagnostics)")
    }

    @Test func traccarGeofencesAsItsOwnTestsDecideThem() throws {
        let items = Self.traccar.enumerated().map { k, g in
            #"{"id":\#(k + 1),"name":"g\#(k + 1)","description":"","area":"\#(g.area)","attributes":{\#(g.distance.map { "\"polylineDistance\":\($0)" } ?? "")}}"#
        }
        let text = "[" + items.joined(separator: ",\n") + "]"
        let read = PlaceFiles.read(Array(text.utf8), file: "geofences.json", format: .traccar)
        #expect(read.diagnostics.isEmpty, "\(read.diagnostics)")
        #expect(read.places.map(\.id) == Self.traccar.indices.map { "g\($0 + 1)" })
        for (k, g) in Self.traccar.enumerated() {
            for p in g.inside { #expect(try Self.contains(read, "g\(k + 1)", p), "\(g.area) should contain \(p)") }
            for p in g.outside { #expect(try !Self.contains(read, "g\(k + 1)", p), "\(g.area) should not contain \(p)") }
        }
        #expect(PlaceFileFormat.inferred(path: "geofences.json", bytes: Array(text.utf8)) == .traccar)
    }

    // MARK: Broken files

    /// Every format's real file cut short, garbled or emptied: errors with a position, no crash.
    /// An empty or garbage file, and a JSON, XML or zip file cut in half, is an error; a cut
    /// YAML file may still be a valid list of fewer zones.
    @Test(arguments: [("ha-ludeeus-packages-zones.yaml", PlaceFileFormat.homeassistant), ("owntracks-cmd-setWaypoints.json", .owntracks),
                      ("kml-togeojson-polygon.kml", .kml), ("kml-leafletkmz-capitals.kmz", .kmz), ("gpx-gpsbabel-basecamp.gpx", .gpx),
                      ("traccar.json", .traccar), ("ha-3nm1-storage-zone.json", .homeassistant)])
    func brokenFilesGiveErrorsWithPositions(name: String, format: PlaceFileFormat) throws {
        let whole = format == .traccar ? Array(#"[{"id":1,"name":"Depot","area":"CIRCLE (55.75414 37.6204, 100)"},{"id":2,"name":"Yard","area":"POLYGON ((55.75474 37.61823, 55.75513 37.61888, 55.7535 37.6222))"}]"#.utf8)
            : try Self.bytes(name)
        let cuts: [(bytes: [UInt8], mustFail: Bool)] = [
            ([], true), (Array("<<<{[".utf8), true), (Array(whole.prefix(whole.count / 2)), format != .homeassistant),
            (Array(whole.prefix(whole.count - 3)), format != .homeassistant), (whole.map { $0 == UInt8(ascii: "4") ? UInt8(ascii: "x") : $0 }, false),
        ]
        for (bytes, mustFail) in cuts {
            let read = PlaceFiles.read(bytes, file: name, format: format) { _ in nil }
            let errors = read.diagnostics.filter { $0.severity == .error }
            if mustFail { #expect(!errors.isEmpty, "\(name): \(bytes.count) bytes gave no error") }
            #expect(!errors.isEmpty || !read.places.isEmpty || !read.diagnostics.isEmpty, "\(name): \(bytes.count) bytes gave nothing at all")
            for error in errors { #expect(error.location?.file.hasPrefix(name) == true && (error.location?.line ?? 0) >= 1, "\(error)") }
        }
    }

    // MARK: Profiles

    @Test func aProfileReadsEveryFormatAndSaysWhereEachFenceCameFrom() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        for name in ["ha-ludeeus-packages-zones.yaml", "owntracks-cmd-setWaypoints.json", "kml-togeojson-polygon.kml", "kml-leafletkmz-capitals.kmz",
                     "gpx-gpsbabel-basecamp.gpx"] {
            try Data(try Self.bytes(name)).write(to: URL(fileURLWithPath: dir.path(name)))
        }
        _ = try dir.write("secrets.yaml", "zone_home_lat: 52.3792\nzone_home_lon: 4.9003\nzone_work_lat: 52.3380\nzone_work_lon: 4.8719\n")
        _ = try dir.write("geofences.txt", #"[{"id":7,"name":"Depot","area":"CIRCLE (55.75414 37.6204, 100)"}]"#)
        let profile = """
        version: 1
        name: places
        mode: regions
        sources:
          gnss: {plugin: gpsd, min_accuracy: 20m}
        fences:
          - file: ha-ludeeus-packages-zones.yaml
          - file: owntracks-cmd-setWaypoints.json
          - file: kml-togeojson-polygon.kml
          - file: kml-leafletkmz-capitals.kmz
            id_prefix: "eu:"
            radius: 2km
          - file: gpx-gpsbabel-basecamp.gpx
            radius: 300m
            events: [enter]
          - file: geofences.txt
            format: traccar
        """
        let path = try dir.write("profile.yaml", profile)
        let result = ProfileLoader.load(bytes: Array(profile.utf8), path: path)
        let errors = result.diagnostics.filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors)")
        let loaded = try #require(result.profile)
        #expect(loaded.fences.map(\.id) == ["home", "work", "TESTING-ID-1", "TESTING-ID-2", "hollow box", "eu:Atene", "eu:Berlino", "eu:Madrid",
                                            "eu:Roma", "eu:Parigi", "Hwy 119", "Hwy 72", "Depot"])
        let hwy = try #require(loaded.fences.first { $0.id == "Hwy 119" })
        #expect(hwy.events == [.enter])
        #expect(hwy.location?.file.hasSuffix("gpx-gpsbabel-basecamp.gpx") == true && hwy.location?.line == 11)
        let index = loaded.makeIndex()
        let berlin = try #require(loaded.fences.firstIndex { $0.id == "eu:Berlino" })
        #expect(index.containing(Self.east(of: Coordinate(latitude: 52.520031, longitude: 13.404782), 1900)).contains(berlin))
        #expect(!index.containing(Self.east(of: Coordinate(latitude: 52.520031, longitude: 13.404782), 2100)).contains(berlin))
    }

    @Test func fileEntriesAreValidated() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("zones.txt", "zone: []\n")
        _ = try dir.write("mystery.json", #"{"hello": 1}"#)
        _ = try dir.write("zones.yaml", "zone:\n  - {name: A, latitude: 1, longitude: 2}\n")
        let profile = """
        version: 1
        name: bad
        mode: regions
        sources:
          gnss: {plugin: gpsd}
        fences:
          - file: zones.txt
          - file: mystery.json
          - file: zones.yaml
            format: kml2
          - file: zones.yaml
            id_property: id
          - file: zones.yaml
            id: x
          - id: c
            circle: {lat: 1, lon: 2, radius: 100m}
            format: kml
        """
        let path = try dir.write("profile.yaml", profile)
        let messages = ProfileLoader.load(bytes: Array(profile.utf8), path: path).diagnostics.filter { $0.severity == .error }.map(\.description)
        #expect(messages.contains { $0.contains(":7:11: error: cannot tell the format of 'zones.txt'") }, "\(messages)")
        #expect(messages.contains { $0.contains(":8:11: error: cannot tell the format of 'mystery.json'") })
        #expect(messages.contains { $0.contains(":10:13: error:") && $0.contains("kml2") })
        #expect(messages.contains { $0.contains(":12:5: error: 'id_property' can only be used with a GeoJSON file (this one is homeassistant)") })
        #expect(messages.contains { $0.contains(":14:5: error: 'id' cannot be used with 'file'") })
        #expect(messages.contains { $0.contains(":17:5: error: 'format' can only be used with 'file'") })
    }
}
