import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// Where relative paths in a profile resolve, and how messages name them.
struct ProfilePathsTests {
    /// A 0.1° square whose south-west corner is `lon`, 46°N.
    static func square(_ lon: Double) -> String {
        "[[[\(lon), 46.0], [\(lon + 0.1), 46.0], [\(lon + 0.1), 46.1], [\(lon), 46.1], [\(lon), 46.0]]]"
    }

    /// A FeatureCollection of squares side by side from `lon`, one per id.
    static func collection(_ ids: [String], from lon: Double = 6) -> String {
        #"{"type": "FeatureCollection", "features": ["#
            + ids.enumerated().map { k, id in #"{"type": "Feature", "id": "\#(id)", "geometry": {"type": "Polygon", "coordinates": \#(square(lon + 0.2 * Double(k)))}}"# }.joined(separator: ", ")
            + "]}"
    }

    @Test func idPrefixKeepsTheFencesOfTwoFilesApart() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("ams.geojson", Self.collection(["1", "2"]))
        _ = try dir.write("rtm.geojson", Self.collection(["1", "2"], from: 7))
        let head = "version: 1\nname: parks\nmode: regions\nsources: {gnss: {}}\nfences:\n"
        let clash = try dir.write("clash.yaml", head + "  - geojson: ams.geojson\n  - geojson: rtm.geojson\n")
        let clashing = try ProfileLoader.load(path: clash)
        #expect(clashing.diagnostics.count == 2)
        #expect(clashing.diagnostics.allSatisfy { $0.message.contains("give the entry of '") && $0.message.contains("an 'id_prefix' (e.g. 'id_prefix: ") })

        let apart = try dir.write("apart.yaml", head + "  - {geojson: ams.geojson, id_prefix: ams-}\n  - {geojson: rtm.geojson, id_prefix: rtm-}\n")
        let loaded = try ProfileLoader.load(path: apart)
        #expect(loaded.diagnostics.isEmpty, "\(loaded.diagnostics)")
        #expect(try #require(loaded.profile).fences.map(\.id) == ["ams-1", "ams-2", "rtm-1", "rtm-2"])

        let inline = try dir.write("inline.yaml", head + "  - {id: a, id_prefix: x-, circle: {lat: 46, lon: 6, radius: 1km}}\n")
        #expect(try ProfileLoader.load(path: inline).diagnostics.map(\.message) == ["'id_prefix' can only be used with a file of fences ('file' or 'geojson')"])
    }

    /// A prefix holds only what an id may hold, and a file's id behind it must still be a
    /// fence id: the file's reader checked the id alone.
    @Test func anIDPrefixKeepsTheFenceIDRule() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let long = String(repeating: "i", count: 100)
        _ = try dir.write("ams.geojson", Self.collection(["1", long]))
        let head = "version: 1\nname: parks\nmode: regions\nsources: {gnss: {}}\nfences:\n"
        let control = try dir.write("control.yaml", head + "  - {geojson: ams.geojson, id_prefix: \"a\\x7Fb\"}\n")
        #expect(try ProfileLoader.load(path: control).diagnostics.map(\.message) == ["'id_prefix' must not contain control characters (got \"a\\u{7F}b\")"])

        let prefix = String(repeating: "p", count: 64)
        let tooLong = try dir.write("long.yaml", head + "  - {geojson: ams.geojson, id_prefix: \(prefix)}\n")
        let loaded = try ProfileLoader.load(path: tooLong)
        #expect(loaded.diagnostics.map(\.message) == ["this place cannot be a fence: its id with the entry's 'id_prefix' '\(prefix)' must be at most 128 characters (got 164)"])
        #expect(loaded.diagnostics.first?.location?.file.hasSuffix("ams.geojson") == true)
    }

    @Test func aProfileReachedThroughASymlinkResolvesAgainstTheRealFilesDirectory() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // The real profile lives with its hook and GeoJSON file; /etc-style a link points to it.
        _ = try dir.write("real/hooks/notify.sh", "#!/bin/sh\nexit 0\n", mode: 0o755)
        _ = try dir.write("real/parks.geojson", Self.collection(["p"]))
        let real = try dir.write("real/home.yaml", """
            version: 1
            name: home
            mode: regions
            sources: {gnss: {}}
            fences:
              - geojson: parks.geojson
            hooks:
              enter: [{exec: [hooks/notify.sh]}]

            """)
        try FileManager.default.createDirectory(atPath: dir.path("etc"), withIntermediateDirectories: true)
        let link = dir.path("etc/home.yaml")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        let result = try ProfileLoader.load(path: link)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let profile = try #require(result.profile)
        let realDirectory = (real as NSString).deletingLastPathComponent
        #expect(profile.directory == realDirectory)
        #expect(profile.hooks.enter.first?.exec.first == realDirectory + "/hooks/notify.sh")
        #expect(profile.fences.map(\.id) == ["p"])
    }

    @Test func messagesShowARelativePathAsResolved() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = try dir.write("p.yaml", """
            version: 1
            name: p
            mode: regions
            sources: {gnss: {}}
            fences:
              - geojson: missing.geojson
            hooks:
              enter: [{exec: [hooks/missing.sh]}]

            """)
        let messages = try ProfileLoader.load(path: profile).diagnostics.map(\.message)
        #expect(messages == [
            "cannot read GeoJSON file 'missing.geojson' (\(dir.path("missing.geojson"))): No such file or directory",
            "hook program 'hooks/missing.sh' (\(dir.path("hooks/missing.sh"))) does not exist",
        ])
    }
}
