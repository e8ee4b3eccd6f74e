public import GeomonCore
import Foundation

/// Fences read from an RFC 7946 FeatureCollection of Polygons and MultiPolygons.
///
/// PLACEHOLDER on Foundation's JSONSerialization (no positions, slow on big files); the
/// foundation issue replaces the internals with a byte-level reader that reports
/// `file:line:column` and streams million-fence files. The API stays.
public enum GeoJSONFences {
    /// Reads `path`; fence ids come from `feature.id` or, when given, `properties[idProperty]`.
    /// Problems are returned as diagnostics; fences that could be read are returned too.
    public static func load(path: String, idProperty: String? = nil) -> (fences: [Fence], diagnostics: [Diagnostic]) {
        let here = SourceLocation(file: path, line: 1, column: 1)
        guard let data = FileManager.default.contents(atPath: path) else {
            return ([], [.error("cannot read GeoJSON file '\(path)'", at: nil)])
        }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              root["type"] as? String == "FeatureCollection",
              let features = root["features"] as? [[String: Any]]
        else {
            return ([], [.error("not a GeoJSON FeatureCollection", at: here)])
        }
        var fences: [Fence] = []
        var diagnostics: [Diagnostic] = []
        for (n, feature) in features.enumerated() {
            let properties = feature["properties"] as? [String: Any]
            var id: String?
            if let idProperty, let value = properties?[idProperty] { id = "\(value)" }
            if id == nil, let value = feature["id"] { id = "\(value)" }
            guard let fenceID = id else {
                diagnostics.append(.error("feature \(n) has no id", at: here))
                continue
            }
            guard let geometry = feature["geometry"] as? [String: Any],
                  let type = geometry["type"] as? String,
                  let coordinates = geometry["coordinates"] as? [Any]
            else {
                diagnostics.append(.error("feature '\(fenceID)' has no geometry", at: here))
                continue
            }
            func ring(_ value: Any) -> [Coordinate]? {
                guard let points = value as? [[Double]] else { return nil }
                return points.map { Coordinate(latitude: $0.count > 1 ? $0[1] : .nan, longitude: $0.first ?? .nan) }
            }
            func polygon(_ value: Any) -> PolygonRings? {
                guard let rings = (value as? [Any])?.compactMap(ring), let shell = rings.first else { return nil }
                return PolygonRings(shell: shell, holes: Array(rings.dropFirst()))
            }
            let polygons: [PolygonRings]?
            switch type {
            case "Polygon": polygons = polygon(coordinates).map { [$0] }
            case "MultiPolygon": polygons = coordinates.map { polygon($0) }.allSatisfy { $0 != nil } ? coordinates.compactMap(polygon) : nil
            default:
                diagnostics.append(.error("feature '\(fenceID)': geometry type '\(type)' is not a Polygon or MultiPolygon", at: here))
                continue
            }
            guard let polygons, !polygons.isEmpty else {
                diagnostics.append(.error("feature '\(fenceID)': malformed coordinates", at: here))
                continue
            }
            let name = properties?["name"] as? String
            fences.append(Fence(id: fenceID, name: name, shape: .polygons(polygons)))
        }
        return (fences, diagnostics)
    }
}
