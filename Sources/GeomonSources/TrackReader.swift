public import GeomonCore
import Foundation

/// A recorded track: its fixes in file order, and what had to be skipped.
public struct Track: Sendable {
    public var path: String
    /// The detected format: "nmea", "gpx", "jsonl", "gpsd-json".
    public var format: String
    public var fixes: [Fix]
    /// Counts of skipped input by reason ("bad checksum", "no fix", "garbage", ...).
    public var skipped: [String: Int]

    public init(path: String, format: String, fixes: [Fix], skipped: [String: Int] = [:]) {
        self.path = path
        self.format = format
        self.fixes = fixes
        self.skipped = skipped
    }
}

/// Why a track could not be read at all.
public struct TrackError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var message: String
    /// True when the file is missing or unreadable (exit 66), false when its content is bad (65).
    public var isMissing: Bool
    public init(path: String, message: String, isMissing: Bool) {
        self.path = path
        self.message = message
        self.isMissing = isMissing
    }
    public var description: String { "\(path): \(message)" }
}

/// Reads NMEA 0183, GPX, JSON lines and gpsd JSON tracks, detecting the format from content.
///
/// PLACEHOLDER: only JSON lines `{"time":…,"lat":…,"lon":…,"accuracy_m":…}`; the engine issue's
/// track readers replace the internals. The API stays.
public enum TrackReader {
    public static func read(path: String) throws(TrackError) -> Track {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TrackError(path: path, message: "cannot read file", isMissing: true)
        }
        var fixes: [Fix] = []
        var skipped: [String: Int] = [:]
        for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let timeText = object["time"] as? String, let time = UTCTime(rfc3339: timeText),
                  let lat = object["lat"] as? Double, let lon = object["lon"] as? Double
            else {
                skipped["garbage", default: 0] += 1
                continue
            }
            let accuracy = object["accuracy_m"] as? Double ?? 10
            fixes.append(Fix(time: time, coordinate: Coordinate(latitude: lat, longitude: lon), horizontalAccuracyMeters: accuracy))
        }
        return Track(path: path, format: "jsonl", fixes: fixes, skipped: skipped)
    }
}
