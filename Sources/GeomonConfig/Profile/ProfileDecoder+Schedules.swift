import GeomonCore
import GeomonFormat
#if canImport(Glibc)
import Glibc
#endif

extension ProfileDecoder {
    static let weekdayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// `active:` of a fence: a list of `{days, from, to}` windows in the profile's `timezone`.
    func decodeSchedule(_ n: YAMLNode) -> FenceSchedule? {
        guard let items = list(n, "active") else { return nil }
        if items.isEmpty {
            error("'active' must list at least one window, e.g. [{days: mon-fri, from: \"07:00\", to: \"09:00\"}]", n)
            return nil
        }
        var windows: [FenceSchedule.Window] = []
        for item in items {
            guard let f = fields(item, path: "active", allowed: ["days", "from", "to"], required: ["from", "to"]),
                  let fromNode = f["from"], let toNode = f["to"] else { return nil }
            var days = Set(0..<7)
            if let d = f["days"] {
                guard let parsed = decodeDays(d) else { return nil }
                days = parsed
            }
            guard let from = clockMinutes(fromNode, "from", allowMidnightEnd: false),
                  let to = clockMinutes(toNode, "to", allowMidnightEnd: true) else { return nil }
            if from == to {
                error("'from' and 'to' are both \(fromNode.scalar ?? ""): the window is empty (for all day use from: \"00:00\", to: \"24:00\")", toNode)
                return nil
            }
            windows.append(FenceSchedule.Window(days: days, start: from, end: to == 1440 ? 0 : to))
        }
        return FenceSchedule(windows: windows)
    }

    /// `mon`, `mon-fri`, `weekdays`, `weekends`, `daily`, or a list of those.
    private func decodeDays(_ n: YAMLNode) -> Set<Int>? {
        let items: [YAMLNode]
        if case .sequence(let list) = n.kind { items = list } else { items = [n] }
        if items.isEmpty {
            error("'days' must name at least one day (mon … sun, mon-fri, weekdays, weekends, daily)", n)
            return nil
        }
        var days: Set<Int> = []
        for item in items {
            guard let text = string(item, "days")?.lowercased() else { return nil }
            switch text {
            case "daily": days.formUnion(0..<7)
            case "weekdays": days.formUnion(0..<5)
            case "weekends": days.formUnion(5..<7)
            default:
                let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
                let indices = parts.map { Self.weekdayNames.firstIndex(of: $0) }
                guard (1...2).contains(parts.count), indices.allSatisfy({ $0 != nil }) else {
                    // A near miss of each part: `mon-fry` → `mon-fri`.
                    let options = parts.count == 1 ? Self.weekdayNames + ["weekdays", "weekends", "daily"] : Self.weekdayNames
                    let fixed = parts.map { part in Self.weekdayNames.contains(part) ? part : EditDistance.suggestion(for: part, among: options) }
                    let hint = fixed.allSatisfy({ $0 != nil }) ? "; did you mean '\(fixed.map { $0! }.joined(separator: "-"))'?" : ""
                    error("'days' must be mon … sun, a range such as mon-fri, weekdays, weekends or daily (got '\(text.clipped)')\(hint)", item)
                    return nil
                }
                let first = indices[0]!, last = indices[indices.count - 1]!
                var d = first
                while true {
                    days.insert(d)
                    if d == last { break }
                    d = (d + 1) % 7
                }
            }
        }
        return days
    }

    /// `"07:30"` as minutes after midnight; `"24:00"` only as an end.
    private func clockMinutes(_ n: YAMLNode, _ name: String, allowMidnightEnd: Bool) -> Int? {
        guard let text = n.scalar, !n.isNull else {
            error("'\(name)' must be a time of day such as \"07:30\" (got \(n.kindDescription))", n)
            return nil
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let digits = parts.allSatisfy { $0.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }
        guard parts.count == 2, digits, (1...2).contains(parts[0].count), parts[1].count == 2,
              let h = Int(parts[0]), let m = Int(parts[1]), (0...59).contains(m),
              (0...23).contains(h) || (allowMidnightEnd && h == 24 && m == 0) else {
            error("'\(name)' must be a local time of day HH:MM such as \"07:30\"\(allowMidnightEnd ? " (or \"24:00\")" : "") (got '\(text.clipped)')", n)
            return nil
        }
        return h * 60 + m
    }

    /// `timezone:`: a name in the time zone database (`Europe/Zurich`, `UTC`).
    func decodeTimeZone(_ n: YAMLNode) -> TimeZoneRules? {
        guard let name = string(n, "timezone") else { return nil }
        switch Self.loadTimeZone(named: name) {
        case .success(let rules): return rules
        case .failure(let problem):
            error(problem.message, n)
            return nil
        }
    }

    struct TimeZoneProblem: Error { var message: String }

    /// Where the time zone database is (`TZDIR`, else `/usr/share/zoneinfo`).
    static var zoneDirectory: String {
        if let dir = getenv("TZDIR").map({ String(cString: $0) }), !dir.isEmpty { return dir }
        return "/usr/share/zoneinfo"
    }

    static func loadTimeZone(named name: String) -> Result<TimeZoneRules, TimeZoneProblem> {
        if name == "UTC" || name == "Etc/UTC" { return .success(.utc) }
        let valid = !name.isEmpty && name.count <= 64 && !name.hasPrefix("/") && !name.split(separator: "/").contains("..")
            && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "/_+-".unicodeScalars.contains($0) }
        guard valid else {
            return .failure(TimeZoneProblem(message: "'timezone' must be a time zone name such as Europe/Zurich or America/New_York (got '\(name.clipped)')"))
        }
        let path = zoneDirectory + "/" + name
        guard case .success(let bytes) = FileBytes.read(path, limit: 1 << 20) else {
            return .failure(TimeZoneProblem(message: "unknown time zone '\(name)': no \(path) (the tzdata package has the time zone database)"))
        }
        guard let rules = TimeZoneRules(tzif: bytes, name: name) else {
            return .failure(TimeZoneProblem(message: "\(path) is not a time zone file (TZif)"))
        }
        return .success(rules)
    }

    /// The system's time zone: `TZ` when it names a zone, else `/etc/localtime` (named by its
    /// link into the database), else UTC.
    static func systemTimeZone() -> TimeZoneRules {
        if let tz = getenv("TZ").map({ String(cString: $0) }), !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if case .success(let rules) = loadTimeZone(named: name) { return rules }
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        var name = "localtime"
        let count = readlink("/etc/localtime", &buffer, buffer.count - 1)
        if count > 0 {
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let range = target.firstRange(of: "zoneinfo/") { name = String(target[range.upperBound...]) }
        }
        if name == "UTC" || name == "Etc/UTC" { return .utc }
        guard case .success(let bytes) = FileBytes.read("/etc/localtime", limit: 1 << 20),
              let rules = TimeZoneRules(tzif: bytes, name: name) else { return .utc }
        return rules
    }
}
