@testable import GeomonConfig
import Foundation
import GeomonCore
import GeomonTestSupport
import Testing

/// A fence file rewritten in place while it is read (an editor or a shell's `>` truncating it
/// first) is one error, not a crash: the mapping's pages past the new end read as zeros
/// instead of raising SIGBUS, and the bytes read are not taken for one version of the file.
struct MappedFileTests {
    /// 2,000 triangles: about 270 KB, many pages.
    private static func fenceFile() -> String {
        var text = "{\"type\":\"FeatureCollection\",\"features\":[\n"
        for k in 0..<2_000 {
            let lat = 45.0 + Double(k / 100) * 0.01, lon = 6.0 + Double(k % 100) * 0.01
            let ring = "[[\(lon),\(lat)],[\(lon + 0.001),\(lat)],[\(lon),\(lat + 0.001)],[\(lon),\(lat)]]"
            text += "{\"type\":\"Feature\",\"id\":\"f\(k)\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[\(ring)]}}\(k < 1_999 ? "," : "")\n"
        }
        return text + "]}\n"
    }

    private static let changed = "fences.geojson: error: the file changed while it was read (it was rewritten in place); "
        + "to replace a fence file safely, write the new version to another file and rename it over this one"

    @Test func aFileTruncatedWhileItIsReadIsOneErrorNotACrash() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try dir.write("fences.geojson", Self.fenceFile())
        guard case .success(let mapped) = MappedFile.open(path) else {
            Issue.record("not mapped")
            return
        }
        #expect(!mapped.changedWhileRead)
        // Emptied in place after the first fence, as `>` does: every page of the mapping,
        // the one being read too, is then past the end.
        var count = 0
        let read = GeoJSONFences.read(mapped, file: "fences.geojson", options: .init()) { _, _ in
            count += 1
            if count == 1 { #expect(truncate(path, 0) == 0) }
        }
        #expect(count >= 1)
        #expect(mapped.changedWhileRead)
        #expect(read.diagnostics.map(\.description) == [Self.changed])
        // Two further reads of the same mapping neither crash nor change the answer.
        let again = GeoJSONFences.read(mapped, file: "fences.geojson", options: .init()) { _, _ in }
        #expect(again.diagnostics.map(\.description) == [Self.changed])
    }

    @Test func aFileGrownWhileItIsReadIsChangedAndOneRenamedOverIsNot() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let text = Self.fenceFile()
        let path = try dir.write("fences.geojson", text)
        guard case .success(let grown) = MappedFile.open(path) else {
            Issue.record("not mapped")
            return
        }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\n".utf8))
        try handle.close()
        let read = GeoJSONFences.read(grown, file: "fences.geojson", options: .init()) { _, _ in }
        #expect(read.diagnostics.map(\.description) == [Self.changed])

        // Renamed over: the mapping keeps the version it opened, whole.
        guard case .success(let kept) = MappedFile.open(path) else {
            Issue.record("not mapped")
            return
        }
        let replacement = try dir.write("new.geojson", "{\"type\":\"FeatureCollection\",\"features\":[]}\n")
        #expect(rename(replacement, path) == 0)
        var count = 0
        let whole = GeoJSONFences.read(kept, file: "fences.geojson", options: .init()) { _, _ in count += 1 }
        #expect(!kept.changedWhileRead)
        #expect(whole.diagnostics.isEmpty, "\(whole.diagnostics.prefix(3))")
        #expect(count == 2_000)
    }
}
