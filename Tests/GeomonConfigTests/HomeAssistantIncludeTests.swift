import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// Home Assistant's `!include_dir_*` for `zone:`, on real files: the list forms are read as
/// Home Assistant reads them (recursively, `*.yaml` only, hidden names and `secrets.yaml` left
/// out), the mapping forms refused by name.
struct HomeAssistantIncludeTests {
    static func profile(_ dir: TemporaryDirectory, zone: String) throws -> ProfileLoadResult {
        _ = try dir.write("configuration.yaml", "homeassistant:\n  name: Casa\nzone: \(zone)\n")
        let path = try dir.write("p.yaml", "version: 1\nname: p\nmode: regions\nsources: {gnss: {}}\nfences:\n  - file: configuration.yaml\n")
        return try ProfileLoader.load(path: path)
    }

    static func zone(_ name: String, _ lat: Double) -> String {
        "name: \(name)\nlatitude: \(lat)\nlongitude: 9.19\n"
    }

    @Test func aDirectoryOfZonesIsReadAsHomeAssistantReadsIt() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.path("zones/more"), withIntermediateDirectories: true)
        // One list per file, merged: sorted by name, a subdirectory after the files, hidden
        // files, other extensions and secrets.yaml left out.
        _ = try dir.write("zones/b.yaml", "- " + Self.zone("Bakery", 45.46).replacingOccurrences(of: "\n", with: "\n  "))
        _ = try dir.write("zones/a.yaml", "- " + Self.zone("Office", 45.47).replacingOccurrences(of: "\n", with: "\n  "))
        _ = try dir.write("zones/more/c.yaml", "- " + Self.zone("Gym", 45.48).replacingOccurrences(of: "\n", with: "\n  "))
        _ = try dir.write("zones/.hidden.yaml", "- " + Self.zone("Hidden", 45.49).replacingOccurrences(of: "\n", with: "\n  "))
        _ = try dir.write("zones/notes.yml", "- " + Self.zone("Yml", 45.5).replacingOccurrences(of: "\n", with: "\n  "))
        _ = try dir.write("zones/secrets.yaml", "home_lat: 1\n")
        let merged = try Self.profile(dir, zone: "!include_dir_merge_list zones")
        #expect(!merged.hasErrors, "\(merged.diagnostics)")
        #expect(merged.profile?.fences.map(\.id) == ["office", "bakery", "gym"])
        #expect(merged.profile?.fences.first?.location?.file.hasSuffix("zones/a.yaml") == true)

        // One zone per file.
        let single = try TemporaryDirectory()
        defer { single.remove() }
        try FileManager.default.createDirectory(atPath: single.path("zones"), withIntermediateDirectories: true)
        _ = try single.write("zones/home.yaml", Self.zone("Home", 45.46))
        _ = try single.write("zones/work.yaml", Self.zone("Work", 45.47))
        let list = try Self.profile(single, zone: "!include_dir_list zones/")
        #expect(!list.hasErrors, "\(list.diagnostics)")
        #expect(list.profile?.fences.map(\.id) == ["home", "work"])
    }

    @Test(arguments: ["!include_dir_named zones", "!include_dir_merge_named zones"])
    func theMappingFormsAreRefusedByName(_ zone: String) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.path("zones"), withIntermediateDirectories: true)
        let result = try Self.profile(dir, zone: zone)
        let tag = String(zone.split(separator: " ")[0])
        #expect(result.diagnostics.contains { $0.severity == .error && $0.message.hasPrefix("'zone: \(tag)' gives a mapping") && $0.location?.line == 3 },
                "\(result.diagnostics)")
        let missing = try Self.profile(dir, zone: "!include_dir_list nowhere")
        #expect(missing.diagnostics.contains { $0.message == "cannot read the directory 'nowhere' that 'zone: !include_dir_list' names" })
    }
}
