public import GeomonCore

/// GeoJSON (RFC 7946) as text, through the one JSON writer: positions `[lon, lat]` rounded
/// to a number of decimals, rings closed, geometries and features as `JSONObject`s.
public enum GeoJSONText {
    /// `[lon,lat]` rounded to `decimals` decimals (7: about a centimetre), as JSON numbers.
    public static func position(_ c: Coordinate, decimals: Int = 7) -> String {
        "[" + JSON.number(c.longitude, decimals: decimals) + "," + JSON.number(c.latitude, decimals: decimals) + "]"
    }

    /// The positions of a line.
    public static func line(_ points: [Coordinate], decimals: Int = 7) -> String {
        JSON.array(raw: points.map { position($0, decimals: decimals) })
    }

    /// A linear ring: the positions, the first repeated at the end when it is not.
    public static func ring(_ points: [Coordinate], decimals: Int = 7) -> String {
        var closed = points
        if let first = points.first, points.last != first { closed.append(first) }
        return line(closed, decimals: decimals)
    }

    /// A geometry object of `type` with `coordinates` (already encoded).
    public static func geometry(_ type: String, coordinates: String) -> JSONObject {
        var o = JSONObject()
        o.add("type", type)
        o.add("coordinates", raw: coordinates)
        return o
    }

    /// A Polygon (one member) or MultiPolygon: shells and their holes.
    public static func polygons(_ members: [PolygonRings], decimals: Int = 7) -> JSONObject {
        let polygons = members.map { JSON.array(raw: ([$0.shell] + $0.holes).map { ring($0, decimals: decimals) }) }
        return polygons.count == 1 ? geometry("Polygon", coordinates: polygons[0]) : geometry("MultiPolygon", coordinates: JSON.array(raw: polygons))
    }

    /// A LineString (one line) or MultiLineString.
    public static func lines(_ lines: [[Coordinate]], decimals: Int = 7) -> JSONObject {
        let encoded = lines.map { line($0, decimals: decimals) }
        return encoded.count == 1 ? geometry("LineString", coordinates: encoded[0]) : geometry("MultiLineString", coordinates: JSON.array(raw: encoded))
    }

    public static func point(_ c: Coordinate, decimals: Int = 7) -> JSONObject {
        geometry("Point", coordinates: position(c, decimals: decimals))
    }

    /// A Feature.
    /// A Feature; a nil `geometry` is `null` (RFC 7946 §3.2: an unlocated feature).
    public static func feature(id: String?, properties: JSONObject, geometry: JSONObject?) -> String {
        var o = JSONObject()
        o.add("type", "Feature")
        if let id { o.add("id", id) }
        o.add("properties", properties)
        if let geometry { o.add("geometry", geometry) } else { o.add("geometry", raw: "null") }
        return o.text
    }

    /// A FeatureCollection of encoded features, one per line.
    public static func featureCollection(_ features: [String]) -> String {
        "{\"type\":\"FeatureCollection\",\"features\":[\n" + features.joined(separator: ",\n") + "\n]}"
    }
}
