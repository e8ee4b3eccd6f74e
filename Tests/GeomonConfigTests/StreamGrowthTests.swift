@testable import GeomonConfig
import GeomonCore
import Testing

struct StreamGrowthTests {
    /// Twice the room until 256 items are in; then what the file likely holds, within two to
    /// four times the room.
    @Test func growthFollowsTheBytesRead() {
        #expect(StreamGrowth.room(count: 100, capacity: 128, read: 1_000, total: 1_000_000) == 256)
        #expect(StreamGrowth.room(count: 0, capacity: 0, read: 0, total: 1_000) == 16)
        // 1,000 items in the first tenth: 11,000 expected, at most four times the room.
        #expect(StreamGrowth.room(count: 1_000, capacity: 1_024, read: 10_000, total: 100_000) == 4_096)
        // 1,000 in the first half: 2,200 expected.
        #expect(StreamGrowth.room(count: 1_000, capacity: 1_024, read: 50_000, total: 100_000) == 2_200)
        // Nearly all read: at least twice the room all the same.
        #expect(StreamGrowth.room(count: 1_000, capacity: 1_024, read: 99_000, total: 100_000) == 2_048)
    }

    /// A ring longer than the reader's first buffer (256 positions) comes back whole and exact.
    @Test func aLongRingIsReadWhole() throws {
        var positions: [String] = []
        var expected: [Coordinate] = []
        for k in 0..<1_000 {
            let lon = "7.\(String(100_000 + k).dropFirst())", lat = "46.\(String(100_000 + (k * 37) % 1000).dropFirst())"
            positions.append("[\(lon),\(lat)]")
            expected.append(Coordinate(latitude: try #require(Double(lat)), longitude: try #require(Double(lon))))
        }
        positions.append(positions[0])
        expected.append(expected[0])
        let text = """
            {"type":"FeatureCollection","features":[{"type":"Feature","id":"long","properties":{},"geometry":{"type":"Polygon","coordinates":[[\(positions.joined(separator: ","))]]}}]}
            """
        let read = GeoJSONFences.parse(Array(text.utf8), file: "long.geojson", checkPolygons: false)
        #expect(read.diagnostics.isEmpty, "\(read.diagnostics)")
        guard case .polygons(let members)? = read.fences.first?.shape else {
            Issue.record("no polygon: \(read.fences)")
            return
        }
        #expect(members.first?.shell == expected)
    }
}
