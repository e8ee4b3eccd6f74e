import GeomonCore
import GeomonFormat

/// Walks a `YAMLNode` tree against the profile schema and collects every diagnostic.
///
/// Each typed accessor reports its own problem at the offending node and returns nil, so a
/// single run finds all problems of a file.
final class ProfileDecoder {
    /// The profile path as given (used in diagnostics).
    let file: String
    /// The profile's directory as given (for diagnostics paths of referenced files).
    let displayDirectory: String
    /// The profile's absolute directory (for resolving paths).
    let absoluteDirectory: String
    var diagnostics: [Diagnostic] = []
    /// Value nodes by dotted key path (`policy.min_sleep`), for cross-field rules.
    var nodes: [String: YAMLNode] = [:]
    /// False when 'mode' was missing or invalid (mode rules are then skipped).
    var modeIsKnown = false
    /// Where each fence id was first defined, the fence file it came from, and where the
    /// `fences:` entry that read that file names it (nil for an inline fence).
    var fenceIDs: [String: (location: SourceLocation, geojsonFile: String?, entry: SourceLocation?)] = [:]
    /// Permission and ownership checks for referenced files (docs/security.md).
    var trust = FileTrust()
    /// Unknown keys that look like a misspelled known key, by the dotted path of the key they
    /// suggest (`sources`, `sources.gnss`): rules about that key being absent stay silent.
    var misspelled: [String: YAMLNode] = [:]
    /// `validate --strict`: ring defects in GeoJSON files are errors, as with `strict: true`.
    var strictGeoJSON = false
    /// Fences used despite ring defects (by the even-odd rule).
    var repairedFences: [String] = []
    /// The fences' index, built as they are decoded (GeoJSON geometry is kept only here).
    var indexBuilder = FenceIndex.Builder()
    /// The fences decoded so far, in order (the profile's, once decoded).
    var decodedFences: [Fence] = []
    /// `defaults:`: what fences report unless they say otherwise.
    var fenceDefaults: FenceRules?
    /// Whether fences came from a Home Assistant zone file (`publish.mqtt.waypoints` then
    /// defaults to false: Home Assistant has these zones already).
    var homeAssistantZones = false
    /// The inradius a fence needs for the profile's GNSS fixes (`min_accuracy` + hysteresis +
    /// `certainCoreMeters`); nil without a GNSS source.
    var inradiusNeeded: Double?
    /// How far from a fence's middle a fix at `min_accuracy` should still count as certainly
    /// inside: about twice a parked receiver's scatter, so that standing inside is not
    /// "uncertain" fix after fix.
    static let certainCoreMeters = 20.0

    init(file: String, displayDirectory: String, absoluteDirectory: String) {
        self.file = file
        self.displayDirectory = displayDirectory
        self.absoluteDirectory = absoluteDirectory
    }

    func location(_ node: YAMLNode) -> SourceLocation {
        SourceLocation(file: file, line: node.line, column: node.column)
    }

    func error(_ message: String, _ node: YAMLNode) {
        diagnostics.append(.error(message, at: location(node)))
    }

    func warning(_ message: String, _ node: YAMLNode) {
        diagnostics.append(.warning(message, at: location(node)))
    }

    /// Records a fence id; reports a duplicate (at `location`, naming the first definition).
    /// Returns false for a duplicate. `alias` names the YAML alias the entry was written as.
    /// `entry` is where a file entry names its file: ids repeated inside the file that one
    /// entry reads were already reported by the file's reader; a file read again by another
    /// entry repeats all of its ids.
    func registerFenceID(_ id: String, at location: SourceLocation, geojsonFile: String?, entry: SourceLocation? = nil,
                         alias: String? = nil) -> Bool {
        guard let first = fenceIDs[id] else {
            fenceIDs[id] = (location, geojsonFile, entry)
            return true
        }
        if geojsonFile != nil, entry != nil, first.entry == entry { return false }
        // The same place of the same file, read by a second entry: reported at that entry.
        let again = first.entry != nil && first.location == location
        let at = again ? entry ?? location : location
        func text(_ other: SourceLocation) -> String {
            other.file == at.file ? "line \(other.line), column \(other.column)" : other.description
        }
        var message = "duplicate fence id '\(id)' (first defined at \(text(first.location)))"
        if again, let firstEntry = first.entry {
            message = "duplicate fence id '\(id)' (first defined at \(text(first.location)), read by the entry at \(text(firstEntry)))"
        }
        if let alias {
            message += "; this entry is the alias '*\(alias)', which repeats that fence"
        } else if let fenceFile = geojsonFile ?? first.geojsonFile {
            let example = "(e.g. 'id_prefix: \(Self.prefixSuggestion(fenceFile))')"
            if geojsonFile == first.geojsonFile {
                message += "; to read '\(fenceFile)' twice, give one of its entries an 'id_prefix' \(example)"
            } else {
                let kind = fenceFile.lowercased().hasSuffix(".geojson") ? "GeoJSON files" : "files"
                message += "; to keep the fences of \(kind) apart, give the entry of '\(fenceFile)' an 'id_prefix' \(example)"
            }
        }
        diagnostics.append(.error(message, at: at))
        return false
    }

    /// `fences/Amsterdam Parks.geojson` → `amsterdam-parks-`.
    static func prefixSuggestion(_ file: String) -> String {
        var base = Substring(file.split(separator: "/").last ?? "")
        if let dot = base.lastIndex(of: ".") { base = base[..<dot] }
        var out = ""
        for scalar in base.lowercased().unicodeScalars {
            let keep = ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
            if keep { out.unicodeScalars.append(scalar) } else if !out.isEmpty && !out.hasSuffix("-") { out += "-" }
        }
        while out.hasSuffix("-") { out.removeLast() }
        return (out.isEmpty ? "file" : String(out.prefix(24))) + "-"
    }

    /// "line 12, column 9" of a node, for messages naming an earlier definition.
    func position(_ node: YAMLNode) -> String {
        "line \(node.line), column \(node.column)"
    }

    // MARK: - Mappings

    /// The entries of a checked mapping: known keys only, first occurrence wins.
    struct Fields {
        let node: YAMLNode
        let path: String
        var entries: [String: YAMLNode.Pair] = [:]

        subscript(_ key: String) -> YAMLNode? { entries[key]?.value }
        func key(_ key: String) -> YAMLNode? { entries[key]?.key }
    }

    /// Checks that `node` is a mapping with only `allowed` keys (reporting unknown keys with a
    /// suggestion, duplicate keys at the second occurrence, and non-string keys).
    /// A null value counts as an empty mapping. `path` is the dotted path ("" for the root).
    func fields(_ node: YAMLNode, path: String, allowed: [String], required: [String] = []) -> Fields? {
        var result = Fields(node: node, path: path)
        if node.isNull {
            for key in required { error("missing required key '\(key)' in '\(path)'", node) }
            return result
        }
        guard case .mapping(let pairs) = node.kind else {
            if path.isEmpty {
                error("a profile must be a mapping of keys such as 'version', 'name' and 'mode' (got \(node.kindDescription))", node)
            } else {
                error("'\(path)' must be a mapping (got \(node.kindDescription))", node)
            }
            return nil
        }
        let context = path.isEmpty ? "at the top level" : "in '\(path)'"
        var seen: [String: YAMLNode] = [:]
        // A merge key (`<<: *base`) was reported by `checkUnsupportedYAML`; the keys it meant
        // to bring are unknown, so none is reported missing.
        var merges = false
        // Required keys a misspelt key was taken for: its error says so, once.
        var suggested: Set<String> = []
        for pair in pairs {
            guard case .scalar(let key, _) = pair.key.kind else {
                error("keys must be plain strings (got \(pair.key.kindDescription))", pair.key)
                continue
            }
            if pair.key.isMergeKey {
                merges = true
                continue
            }
            if let first = seen[key] {
                error("duplicate key '\(key)' (first at \(position(first)))", pair.key)
                continue
            }
            seen[key] = pair.key
            guard allowed.contains(key) else {
                if let suggestion = EditDistance.suggestion(for: key, among: allowed) {
                    misspelled[path.isEmpty ? suggestion : "\(path).\(suggestion)"] = pair.key
                    suggested.insert(suggestion)
                    error("unknown key '\(key)' \(context); did you mean '\(suggestion)'?", pair.key)
                } else {
                    error("unknown key '\(key)' \(context) (expected one of: \(allowed.joined(separator: ", ")))", pair.key)
                }
                continue
            }
            result.entries[key] = pair
            nodes[path.isEmpty ? key : "\(path).\(key)"] = pair.value
        }
        for key in required where result.entries[key] == nil && !suggested.contains(key) && !merges {
            if path.isEmpty {
                error("missing required key '\(key)'", node)
            } else {
                error("missing required key '\(key)' in '\(path)'", node)
            }
        }
        return result
    }

    /// Reports the YAML features a profile is not read with, anywhere in it: tags (`!secret`,
    /// `!!int`: a profile's values are read by the key they belong to, as written) and merge
    /// keys (`<<: *base`). Text reached through an alias is checked where it is anchored.
    func checkUnsupportedYAML(_ node: YAMLNode) {
        if let tag = node.tag {
            error("YAML tags such as '\(Self.writtenTag(tag))' are not supported in a profile: write the value itself", node)
        }
        switch node.kind {
        case .scalar:
            break
        case .sequence(let items):
            for item in items where item.alias == nil { checkUnsupportedYAML(item) }
        case .mapping(let pairs):
            for pair in pairs {
                if pair.key.isMergeKey {
                    error("YAML merge keys ('<<') are not supported in a profile: write the keys out", pair.key)
                }
                if pair.key.alias == nil { checkUnsupportedYAML(pair.key) }
                if pair.value.alias == nil { checkUnsupportedYAML(pair.value) }
            }
        }
    }

    /// A tag as it was written: libyaml gives `!!int` as `tag:yaml.org,2002:int`.
    static func writtenTag(_ tag: String) -> String {
        let prefix = "tag:yaml.org,2002:"
        return (tag.hasPrefix(prefix) ? "!!" + tag.dropFirst(prefix.count) : tag).clipped
    }

    /// The items of a list; null counts as empty.
    func list(_ node: YAMLNode, _ name: String) -> [YAMLNode]? {
        if node.isNull { return [] }
        guard case .sequence(let items) = node.kind else {
            error("'\(name)' must be a list (got \(node.kindDescription))", node)
            return nil
        }
        return items
    }

    // MARK: - Scalars

    func string(_ node: YAMLNode, _ name: String) -> String? {
        guard case .scalar(let text, _) = node.kind, !node.isNull else {
            error("'\(name)' must be a string (got \(node.kindDescription))", node)
            return nil
        }
        return text
    }

    func integer(_ node: YAMLNode, _ name: String, range: ClosedRange<Int>) -> Int? {
        guard case .scalar(let text, .plain) = node.kind, let value = Int(text) else {
            error("'\(name)' must be an integer (got \(node.kindDescription))", node)
            return nil
        }
        guard range.contains(value) else {
            error("'\(name)' must be between \(range.lowerBound) and \(range.upperBound) (got \(text.clipped))", node)
            return nil
        }
        return value
    }

    func boolean(_ node: YAMLNode, _ name: String) -> Bool? {
        if case .scalar(let text, .plain) = node.kind {
            if text == "true" { return true }
            if text == "false" { return false }
        }
        error("'\(name)' must be true or false (got \(node.kindDescription))", node)
        return nil
    }

    /// A plain decimal number in `range` (degrees for lat/lon).
    func number(_ node: YAMLNode, _ name: String, range: ClosedRange<Double>, unit: String) -> Double? {
        guard case .scalar(let text, .plain) = node.kind, !node.isNull,
              text.unicodeScalars.contains(where: { ("0"..."9").contains($0) }),
              let value = Double(text), value.isFinite
        else {
            error("'\(name)' must be a number (got \(node.kindDescription))", node)
            return nil
        }
        guard range.contains(value) else {
            error("'\(name)' must be between \(formatNumber(range.lowerBound)) and \(formatNumber(range.upperBound)) \(unit) (got \(text.clipped))", node)
            return nil
        }
        return value
    }

    enum Bound {
        case positive
        case nonNegative
    }

    /// A quantity with a unit, in the base unit; checks the unit, the lower bound and a maximum:
    /// the kind's sanity limit, or `maximum` (its value in the base unit and as written).
    func quantity(_ node: YAMLNode, _ name: String, _ kind: Quantity, _ bound: Bound = .positive, maximum: (value: Double, text: String)? = nil) -> Double? {
        guard case .scalar(let text, let style) = node.kind, style != .block, !node.isNull else {
            error("'\(name)' must be \(kind.noun) such as \(kind.examples) (got \(node.kindDescription))", node)
            return nil
        }
        switch kind.parse(text) {
        case .notANumber:
            error("'\(name)' must be \(kind.noun) such as \(kind.examples) (got '\(text.clipped)')", node)
            return nil
        case .unknownUnit(let unit):
            error("unknown unit '\(unit)' in '\(name)' (\(kind == .distance ? "distances" : kind == .duration ? "durations" : kind == .speed ? "speeds" : kind == .acceleration ? "accelerations" : "powers") use \(kind.unitList))", node)
            return nil
        case .value(let value):
            switch bound {
            case .positive where value <= 0:
                error("'\(name)' must be greater than 0 \(kind.baseUnit) (got \(text.clipped))", node)
                return nil
            case .nonNegative where value < 0:
                error("'\(name)' must not be negative (got \(text.clipped))", node)
                return nil
            default:
                break
            }
            let limit = maximum ?? (kind.maximum, kind.maximumText)
            guard value <= limit.value else {
                error("'\(name)' is too large (at most \(limit.text); got \(text.clipped))", node)
                return nil
            }
            return value
        }
    }

    func duration(_ node: YAMLNode, _ name: String, _ bound: Bound = .positive) -> Duration? {
        guard let seconds = quantity(node, name, .duration, bound) else { return nil }
        let milliseconds = (seconds * 1000).rounded()
        if seconds > 0 && milliseconds < 1 {
            error("'\(name)' must be at least 1ms (got \(node.scalar ?? ""))", node)
            return nil
        }
        // A small whole number written by hand (`30`, not a generator's `30.0`).
        if seconds > 0, seconds < 60, Self.minuteScaleKeys.contains(name), let text = node.scalar,
           text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            warning("'\(name): \(text)' is \(text) seconds (a bare number is seconds); write '\(text)s', or '\(text)m' if minutes were meant", node)
        }
        return .milliseconds(Int64(milliseconds))
    }

    /// Duration keys whose values are minutes to days (their defaults are 5 minutes or more):
    /// a bare number under 60 there was likely meant as minutes.
    static let minuteScaleKeys: Set<String> = ["max_sleep", "stale_after", "min_interval", "hot_window", "every", "max_backoff",
                                               "max_age", "keep_fixes", "dwell", "after"]

    /// One of fixed words, with a suggestion for near misses.
    func choice(_ node: YAMLNode, _ name: String, _ allowed: [String]) -> String? {
        guard let text = string(node, name) else { return nil }
        if allowed.contains(text) { return text }
        let options = allowed.count == 1 ? "'\(allowed[0])'" : allowed.dropLast().map { "'\($0)'" }.joined(separator: ", ") + " or '\(allowed[allowed.count - 1])'"
        if let suggestion = EditDistance.suggestion(for: text, among: allowed) {
            error("'\(name)' must be \(options) (got '\(text.clipped)'); did you mean '\(suggestion)'?", node)
        } else {
            error("'\(name)' must be \(options) (got '\(text.clipped)')", node)
        }
        return nil
    }

    /// A path relative to the profile's directory, made absolute.
    func resolvedPath(_ path: String) -> String {
        path.hasPrefix("/") ? path : PathText.absolute(PathText.join(absoluteDirectory, path))
    }

    /// A path relative to the profile's directory, as shown in diagnostics.
    func displayPath(_ path: String) -> String {
        PathText.join(displayDirectory, path)
    }

    /// `'fences/a.geojson'`, with the resolved path when it differs: `'fences/a.geojson'
    /// (/etc/geomon/fences/a.geojson)`.
    func quotedPath(_ path: String) -> String {
        let resolved = resolvedPath(path)
        return resolved == path ? "'\(path)'" : "'\(path)' (\(resolved))"
    }
}

extension Duration {
    /// Compact text for messages: `90s`, `5m`, `2h`, `1.5s`.
    var profileText: String {
        let ms = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        if ms % 86_400_000 == 0 && ms >= 86_400_000 { return "\(ms / 86_400_000)d" }
        if ms % 3_600_000 == 0 && ms >= 3_600_000 { return "\(ms / 3_600_000)h" }
        if ms % 60_000 == 0 && ms >= 60_000 { return "\(ms / 60_000)m" }
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        return "\(ms)ms"
    }
}

/// What a fence reports beside its shape (`events`, `dwell`, `approach`) and when (`active`):
/// one value so that
/// `defaults:` and a file entry hand it to every fence they make.
/// A file entry's `overrides:`: rules by fence id, each taken once as its fence is read.
struct FenceOverrides {
    var byID: [String: (rules: FenceRules, key: YAMLNode)] = [:]

    var isEmpty: Bool { byID.isEmpty }

    /// The rules for fence `id`, if the entry overrides them (each is used once).
    mutating func take(_ id: String) -> FenceRules? {
        byID.removeValue(forKey: id)?.rules
    }

    /// Ids no fence of the file had: an error each (a typo, or the prefix left out).
    func reportUnused(file: String, _ decoder: ProfileDecoder) {
        for (id, entry) in byID.sorted(by: { $0.key < $1.key }) {
            decoder.error("'overrides' names '\(id)', which is not a fence of '\(file)' (ids include any 'id_prefix'; 'geomon fences' lists them)", entry.key)
        }
    }
}

struct FenceRules {
    var events: Set<EventKind> = [.enter, .exit]
    var dwell: Duration?
    var dwellEvery: Duration?
    var approach: ApproachSettings?
    var active: FenceSchedule?
    var cooldown: Duration?
    var speedLimit: SpeedLimit?
    /// `lint: false`: the fence's lint warnings (swapped coordinates, small, concentric, same
    /// shape) are acknowledged and not reported; errors still are.
    var lint = true

    func apply(to fence: inout Fence) {
        fence.events = events
        fence.dwell = dwell
        fence.dwellEvery = dwellEvery
        fence.approach = approach
        fence.active = active
        fence.cooldown = cooldown
        fence.speedLimit = speedLimit
    }
}
