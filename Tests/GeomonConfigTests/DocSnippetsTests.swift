import Foundation
import GeomonConfig
import GeomonTestSupport
import Testing

/// Every ```yaml block in README.md and docs/ is a valid profile or a valid part of one.
///
/// Each block is a piece of a profile's top level (or a whole profile), checked inside a small
/// base profile whose keys it replaces. The
/// programs and GeoJSON files it names are created first (an executable stub, a one-feature
/// collection), so what is checked is the schema: keys, units, ranges, rules.
struct DocSnippetsTests {
    struct Snippet: CustomTestStringConvertible, Sendable {
        var file: String
        var line: Int
        var text: String
        var testDescription: String { "\(file):\(line)" }
    }

    static let topLevelKeys = ["version", "name", "description", "mode", "sources", "significant_change", "movement", "policy", "modes", "transitions", "timezone", "defaults", "fences", "hooks", "publish", "storage"]

    static let snippets: [Snippet] = {
        let root = TestSupport.packageRoot
        let docs = root.appendingPathComponent("docs")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: docs.path)) ?? []).filter { $0.hasSuffix(".md") }.sorted()
        var files = [("README.md", root.appendingPathComponent("README.md"))]
        files += names.map { ("docs/\($0)", docs.appendingPathComponent($0)) }
        var result: [Snippet] = []
        for (name, url) in files {
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
            var inYAML = false
            var start = 0
            var body: [Substring] = []
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if !inYAML, line == "```yaml" || line == "```yml" {
                    inYAML = true
                    start = index + 2
                    body = []
                } else if inYAML, line.hasPrefix("```") {
                    inYAML = false
                    result.append(Snippet(file: name, line: start, text: body.joined(separator: "\n") + "\n"))
                } else if inYAML {
                    body.append(line)
                }
            }
        }
        return result
    }()

    /// The top-level keys a block defines (lines starting in column 1 with `key:`).
    static func keys(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            guard let first = line.first, first.isLetter, let colon = line.firstIndex(of: ":") else { return nil }
            return String(line[..<colon])
        }
    }

    /// The files a block names (`exec` first elements, `geojson:` values), relative ones only.
    static func referencedFiles(_ text: String) -> (programs: [String], geojson: [String], secrets: [String]) {
        var programs: [String] = [], geojson: [String] = [], secrets: [String] = []
        for match in text.matches(of: /(?:exec|on|off): \[([^,\]]+)/) { programs.append(String(match.1).trimmingCharacters(in: .whitespaces)) }
        for match in text.matches(of: /(?:^|[\s{,])(?:geojson|file): ([^\s,}]+)/.anchorsMatchLineEndings()) { geojson.append(String(match.1)) }
        for match in text.matches(of: /(?:password_file|env_file|ca_file|cert_file|key_file): ([^\s,}]+)/) { secrets.append(String(match.1)) }
        return (programs.filter { !$0.hasPrefix("/") }, geojson.filter { !$0.hasPrefix("/") }, secrets.filter { !$0.hasPrefix("/") })
    }

    @Test func theDocsHaveYAMLSnippets() {
        #expect(Self.snippets.count >= 12)
        #expect(Set(Self.snippets.map(\.file)).isSuperset(of: ["docs/hooks.md", "docs/profile-reference.md"]))
    }

    @Test(arguments: snippets)
    func snippetValidates(_ snippet: Snippet) throws {
        let keys = Self.keys(snippet.text)
        let unknown = keys.filter { !Self.topLevelKeys.contains($0) }
        #expect(unknown.isEmpty, "\(snippet.file):\(snippet.line): not a profile's top level: \(unknown)")
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (programs, geojson, secrets) = Self.referencedFiles(snippet.text)
        for program in programs { _ = try dir.write(program, "#!/bin/sh\nexit 0\n", mode: 0o755) }
        for secret in secrets { _ = try dir.write(secret, "NAME=value\n", mode: 0o600) }
        for file in geojson {
            // A fence file of the format its name says, with one place.
            let text = switch file.split(separator: ".").last ?? "" {
            case "yaml", "yml": "zone:\n  - {name: Doc Zone, latitude: 52.505, longitude: 13.415, radius: 150}\n"
            case "kml": #"<kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><name>Doc</name><Point><coordinates>13.415,52.505</coordinates></Point></Placemark></Document></kml>"#
            default: #"{"type": "FeatureCollection", "features": [{"type": "Feature", "id": "doc-feature", "properties": {"id": "doc-feature", "name": "Doc"}, "geometry": {"type": "Polygon", "coordinates": [[[13.41, 52.50], [13.42, 52.50], [13.42, 52.51], [13.41, 52.51], [13.41, 52.50]]]}}]}"#
            }
            if file.contains("/") { try FileManager.default.createDirectory(at: URL(fileURLWithPath: dir.path(file)).deletingLastPathComponent(), withIntermediateDirectories: true) }
            _ = try dir.write(file, text)
        }
        // Significant-change settings, or sources without GNSS: the mode that uses them.
        let coarseMode = keys.contains("significant_change") || (keys.contains("sources") && !snippet.text.contains("gnss"))
        let base: [(String, String)] = [
            ("version", "version: 1\n"), ("name", "name: docs\n"),
            ("mode", coarseMode ? "mode: significant-change\n" : "mode: regions\n"),
            ("sources", "sources:\n  gnss: {}\n  coarse: {exec: [/bin/true]}\n"),
            ("fences", "fences:\n  - {id: docs-base, circle: {lat: 52.52, lon: 13.40, radius: 150m}}\n"),
        ]
        let text = base.filter { !keys.contains($0.0) }.map(\.1).joined() + snippet.text
        let path = try dir.write("snippet.yaml", text)
        let result = ProfileLoader.load(bytes: Array(text.utf8), path: path)
        let errors = result.diagnostics.filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(snippet.file):\(snippet.line):\n\(text)\n\(errors.map(\.description).joined(separator: "\n"))")
    }
}
