import Foundation
public import GeomonCore

/// The real tracks of `Tests/Fixtures/power` (JSON lines) and the fences the power evaluation
/// places along them, shared by the core and daemon test targets.
public enum PowerTracks {
    /// Every track of docs/power.md's evaluation, with its kind of movement.
    public static let kinds: KeyValuePairs<String, String> = [
        "genivi_20100403_Z205_Switzerland": "drive",
        "genivi_20100403_Z205_Switzerland_short": "drive",
        "gmt_MTV.Local1.ublox-F9K.20200206-181434": "drive",
        "barefoot_x0001-001": "drive",
        "georust_garmin_with_extensions": "walk",
        "gpxpy_cerknicko-jezero": "walk",
        "gpxpy_korita-zbevnica": "walk",
        "gpxanimator_bikeride": "bike",
        "tcxreader_mapmyride_biking": "bike",
        "runpandas_7ee8e9d1-bb55-4b1f-a232-a4c40ab2a500": "run",
        "signalk_plaka": "boat",
        "rob_tomales_data.shrinked": "boat",
        "openrailrouting_00c03ac99213": "rail",
    ]

    public static var names: [String] { kinds.map(\.key) }

    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// `Tests/Fixtures/power/<name>.jsonl` as fixes.
    public static func load(_ name: String) throws -> [Fix] {
        let text = try String(contentsOf: TestSupport.fixture("power/\(name).jsonl"), encoding: .utf8)
        var fixes: [Fix] = []
        for (n, line) in text.split(separator: "\n").enumerated() {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let timeText = object["time"] as? String, let time = UTCTime(rfc3339: timeText),
                  let lat = object["lat"] as? Double, let lon = object["lon"] as? Double,
                  let accuracy = object["accuracy_m"] as? Double
            else { throw LoadError(description: "\(name).jsonl:\(n + 1): bad line") }
            fixes.append(Fix(
                time: time, coordinate: Coordinate(latitude: lat, longitude: lon), horizontalAccuracyMeters: accuracy,
                speedMetersPerSecond: object["speed_mps"] as? Double, courseDegrees: object["course_deg"] as? Double
            ))
        }
        return fixes
    }

    /// Circles of `radiusMeters` centred on the track every `spacingMeters` of travelled distance:
    /// the k-th circle (k = 1, 2, …) is centred on the first recorded fix at which the cumulative
    /// great-circle distance along the track reaches k × spacing.
    public static func fences(along track: [Fix], spacingMeters: Double, radiusMeters: Double = 250) -> [FenceShape] {
        var shapes: [FenceShape] = []
        var travelled = 0.0
        var next = spacingMeters
        for (a, b) in zip(track, track.dropFirst()) {
            travelled += Geodesy.haversineMeters(a.coordinate, b.coordinate)
            if travelled >= next {
                shapes.append(.circle(center: b.coordinate, radiusMeters: radiusMeters))
                while next <= travelled { next += spacingMeters }
            }
        }
        return shapes
    }
}
