public import GeomonCore
import Foundation

/// Why a profile could not be loaded.
public struct ProfileLoadError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var message: String
    /// True when the file is missing or unreadable (exit 66); false when invalid (exit 65).
    public var isMissing: Bool
    public init(path: String, message: String, isMissing: Bool) {
        self.path = path
        self.message = message
        self.isMissing = isMissing
    }
    public var description: String { "\(path): \(message)" }
}

/// The ONE place the daemon and the commands load a profile.
///
/// TEMPORARY: until `GeomonConfig.ProfileLoader` is wired in here (by the lead), this reads
/// the JSON-compatible subset of the YAML profile language (flow style: JSON is valid YAML
/// 1.2) with the same keys, so the test profiles stay valid for the real loader. Numbers are
/// metres/seconds; strings with units `m`, `km`, `s`, `min`, `h`, `d` (and `m` for minutes in
/// durations) are accepted. It is not a YAML parser and validates only what the engine needs.
public func loadProfile(path: String) throws(ProfileLoadError) -> Profile {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw ProfileLoadError(path: path, message: "cannot read profile", isMissing: true)
    }
    func invalid(_ message: String) -> ProfileLoadError {
        ProfileLoadError(path: path, message: message, isMissing: false)
    }
    // YAML comment lines (`# …`) are dropped; the rest must be JSON.
    let text = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }.joined(separator: "\n")
    guard let root = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
        throw invalid("not a profile this build can read (the temporary loader reads JSON-style YAML only)")
    }
    guard let name = root["name"] as? String, !name.isEmpty else { throw invalid("'name' is required") }
    guard let modeText = root["mode"] as? String, let mode = MonitoringMode(rawValue: modeText) else {
        throw invalid("'mode' must be continuous, significant-change or regions")
    }
    var profile = Profile(name: name, mode: mode)
    profile.path = path
    profile.directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
    profile.description = root["description"] as? String

    func distance(_ value: Any?, _ key: String) throws(ProfileLoadError) -> Double? {
        guard let value else { return nil }
        if let number = value as? NSNumber { return number.doubleValue }
        if let text = value as? String {
            if text.hasSuffix("km"), let v = Double(text.dropLast(2)) { return v * 1000 }
            if text.hasSuffix("m"), let v = Double(text.dropLast(1)) { return v }
        }
        throw invalid("'\(key)' must be a distance (got \(value))")
    }
    func duration(_ value: Any?, _ key: String) throws(ProfileLoadError) -> Duration? {
        guard let value else { return nil }
        var seconds: Double?
        if let number = value as? NSNumber { seconds = number.doubleValue }
        if let text = value as? String {
            let units: [(String, Double)] = [("ms", 0.001), ("min", 60), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
            for (unit, factor) in units where text.hasSuffix(unit) {
                if let v = Double(text.dropLast(unit.count)) { seconds = v * factor; break }
            }
        }
        guard let seconds, seconds.isFinite, seconds >= 0 else { throw invalid("'\(key)' must be a duration (got \(value))") }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    if let sources = root["sources"] as? [String: Any] {
        if let gnss = sources["gnss"] as? [String: Any] {
            var settings = GNSSSourceSettings()
            if let v = try distance(gnss["min_accuracy"], "sources.gnss.min_accuracy") { settings.minAccuracyMeters = v }
            profile.sources.gnss = settings
        }
        if let coarse = sources["coarse"] as? [String: Any] {
            var settings = CoarseSourceSettings()
            settings.exec = coarse["exec"] as? [String] ?? []
            if let v = try duration(coarse["interval"], "sources.coarse.interval") { settings.interval = v }
            profile.sources.coarse = settings
        }
    }
    if let sc = root["significant_change"] as? [String: Any] {
        if let v = try distance(sc["distance"], "significant_change.distance") { profile.significantChange.distanceMeters = v }
        if let v = try duration(sc["min_interval"], "significant_change.min_interval") { profile.significantChange.minInterval = v }
    }
    if let t = root["transitions"] as? [String: Any] {
        if let v = try distance(t["hysteresis"], "transitions.hysteresis") { profile.transitions.hysteresisMeters = v }
        if let v = t["confirm"] {
            guard let n = v as? Int, n >= 1 else { throw invalid("'transitions.confirm' must be an integer >= 1") }
            profile.transitions.confirm = n
        }
        if let v = t["initial"] {
            guard let text = v as? String, let initial = InitialReport(rawValue: text) else {
                throw invalid("'transitions.initial' must be silent or report")
            }
            profile.transitions.initial = initial
        }
    }
    if let storage = root["storage"] as? [String: Any] {
        profile.storage.path = storage["path"] as? String
        if let v = try duration(storage["keep_fixes"], "storage.keep_fixes") { profile.storage.keepFixes = v }
    }
    var seen: Set<String> = []
    for (n, item) in (root["fences"] as? [Any] ?? []).enumerated() {
        guard let f = item as? [String: Any], let id = f["id"] as? String, !id.isEmpty else {
            throw invalid("fences[\(n)]: 'id' is required")
        }
        guard seen.insert(id).inserted else { throw invalid("fences[\(n)]: duplicate fence id '\(id)'") }
        func coordinate(_ value: Any?) -> Coordinate? {
            guard let c = value as? [String: Any], let lat = (c["lat"] as? NSNumber)?.doubleValue,
                  let lon = (c["lon"] as? NSNumber)?.doubleValue else { return nil }
            let coordinate = Coordinate(latitude: lat, longitude: lon)
            return coordinate.isValid ? coordinate : nil
        }
        let shape: FenceShape
        if let circle = f["circle"] as? [String: Any] {
            guard let center = coordinate(circle), let radius = try distance(circle["radius"], "radius"), radius > 0 else {
                throw invalid("fences[\(n)] '\(id)': circle needs lat, lon and radius > 0")
            }
            shape = .circle(center: center, radiusMeters: radius)
        } else if let points = f["polygon"] as? [Any] {
            let shell = points.compactMap(coordinate)
            guard shell.count == points.count, shell.count >= 3 else {
                throw invalid("fences[\(n)] '\(id)': polygon needs at least 3 points with lat and lon")
            }
            let holes = (f["holes"] as? [[Any]] ?? []).map { $0.compactMap(coordinate) }
            shape = .polygons([PolygonRings(shell: shell, holes: holes)])
        } else {
            throw invalid("fences[\(n)] '\(id)': needs circle or polygon")
        }
        var fence = Fence(id: id, name: f["name"] as? String, shape: shape)
        if let events = f["events"] as? [String] {
            var kinds: Set<EventKind> = []
            for text in events {
                guard let kind = EventKind(rawValue: text), kind != .location else {
                    throw invalid("fences[\(n)] '\(id)': unknown event '\(text)'")
                }
                kinds.insert(kind)
            }
            fence.events = kinds
        }
        fence.dwell = try duration(f["dwell"], "dwell")
        if fence.events.contains(.dwell) && fence.dwell == nil {
            throw invalid("fences[\(n)] '\(id)': 'dwell' is required when dwell is listed")
        }
        profile.fences.append(fence)
    }
    if let hooks = root["hooks"] as? [String: Any] {
        func specs(_ key: String) throws(ProfileLoadError) -> [HookSpec] {
            var result: [HookSpec] = []
            for item in hooks[key] as? [Any] ?? [] {
                guard let h = item as? [String: Any], let exec = h["exec"] as? [String], !exec.isEmpty else {
                    throw invalid("hooks.\(key): each hook needs 'exec' (a non-empty list)")
                }
                var spec = HookSpec(exec: exec)
                if let t = try duration(h["timeout"], "timeout") { spec.timeout = t }
                result.append(spec)
            }
            return result
        }
        profile.hooks.enter = try specs("enter")
        profile.hooks.exit = try specs("exit")
        profile.hooks.dwell = try specs("dwell")
        profile.hooks.location = try specs("location")
    }
    return profile
}
