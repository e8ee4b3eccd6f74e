import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// Golden tests: each `Fixtures/profiles/{invalid,warnings}/NAME.yaml` must produce exactly
/// the diagnostic lines in `NAME.expected` (paths relative to the fixture directory).
struct ProfileCorpusTests {
    static func names(_ directory: String) -> [String] {
        let url = TestSupport.fixture("profiles/\(directory)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return files.filter { $0.hasSuffix(".yaml") }.map { String($0.dropLast(5)) }.sorted()
    }

    static let invalidNames = names("invalid")
    static let warningNames = names("warnings")

    /// A private copy of a fixture directory with the hook permissions git cannot keep.
    static func preparedCopy(_ directory: String) throws -> URL {
        let temp = try TemporaryDirectory(prefix: "geomon-corpus")
        let target = temp.url.appendingPathComponent(directory)
        try FileManager.default.copyItem(at: TestSupport.fixture("profiles/\(directory)"), to: target)
        let modes = ["ok.sh": 0o755, "not-executable.sh": 0o644, "group-writable.sh": 0o775, "world-writable.sh": 0o757]
        for (file, mode) in modes {
            let path = target.appendingPathComponent("hooks/\(file)").path
            if FileManager.default.fileExists(atPath: path) {
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            }
        }
        return target
    }

    static func rendered(_ name: String, in directory: URL) throws -> [String] {
        let path = directory.appendingPathComponent("\(name).yaml").path
        let result = try ProfileLoader.load(path: path)
        let prefix = directory.path + "/"
        // Paths appear at the start and inside messages ("first defined at …").
        return result.diagnostics.map { $0.description.replacingOccurrences(of: prefix, with: "") }
    }

    static func expected(_ name: String, in directory: URL) throws -> [String] {
        let text = try String(contentsOf: directory.appendingPathComponent("\(name).expected"), encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    @Test func corpusIsLargeEnough() {
        #expect(Self.invalidNames.count >= 45)
        #expect(Self.warningNames.count >= 5)
    }

    @Test(arguments: invalidNames)
    func invalidProfileGivesExactlyTheExpectedDiagnostics(_ name: String) throws {
        let directory = try Self.preparedCopy("invalid")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let actual = try Self.rendered(name, in: directory)
        #expect(actual == (try Self.expected(name, in: directory)))
        let result = try ProfileLoader.load(path: directory.appendingPathComponent("\(name).yaml").path)
        #expect(result.hasErrors)
        #expect(result.profile == nil)
    }

    @Test(arguments: warningNames)
    func lintProfileGivesExactlyTheExpectedWarnings(_ name: String) throws {
        let directory = try Self.preparedCopy("warnings")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let actual = try Self.rendered(name, in: directory)
        #expect(actual == (try Self.expected(name, in: directory)))
        let result = try ProfileLoader.load(path: directory.appendingPathComponent("\(name).yaml").path)
        #expect(!result.hasErrors)
        // Every fixture warns, but those whose fences acknowledge their lint (`lint: false`).
        #expect(result.diagnostics.isEmpty == name.contains("acknowledged"))
        #expect(result.profile != nil)
    }
}
