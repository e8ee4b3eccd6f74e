import GeomonConfig
import GeomonCore
import Testing

/// Inline `polygon:` fences as the loader checks them.
struct InlinePolygonTests {
    static func errors(_ points: [(Double, Double)]) -> [String] {
        let text = "version: 1\nname: p\nmode: regions\nsources: {gnss: {}}\nfences:\n  - id: p\n    polygon: ["
            + points.map { "{lat: \($0.1), lon: \($0.0)}" }.joined(separator: ", ") + "]\n"
        return ProfileLoader.load(bytes: Array(text.utf8), path: "/tmp/polygon.yaml").diagnostics.filter { $0.severity == .error }.map(\.message)
    }

    /// Across the antimeridian a polygon is judged unwrapped, as the index reads it: simple
    /// there, it loads; crossing itself there, it is refused (docs/geometry.md).
    @Test func polygonsAcrossTheAntimeridianAreJudgedUnwrapped() {
        #expect(Self.errors([(179.9, 0), (-179.9, 0), (-179.95, 1), (179.95, 0.5), (179.85, 1)]).isEmpty)
        #expect(Self.errors([(-179.727, 0.66), (179.885, 0.86), (179.844, 0.56), (-179.715, 0.48), (-179.829, 0.2)]).contains { $0.contains("cross") })
    }
}
