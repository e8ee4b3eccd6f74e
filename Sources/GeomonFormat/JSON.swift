/// geomon's one JSON writer: deterministic text (keys in the order added, no Foundation), used
/// for every JSON geomon prints or stores (events, hook stdin, status, reports, diagnostics).
///
/// Numbers follow one rule everywhere (`JSON.number`): shortest round-trip decimal after
/// rounding to the quantity's precision, no exponent, integral values without `.0`, and
/// `null` for NaN and infinities (never `nan` or `inf`, which are not JSON).
public enum JSON {
    /// A JSON string literal with the mandatory escapes (and DEL as `\u007f`).
    public static func string(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A number, or `null` when it is not finite. With `decimals`, rounded to that many places
    /// first (coordinates: 7, metres: 1, seconds: 3).
    public static func number(_ value: Double, decimals: Int? = nil) -> String {
        guard value.isFinite else { return "null" }
        return NumberText.shortest(decimals.map { NumberText.rounded(value, $0) } ?? value)
    }

    public static func number(_ value: Int) -> String { String(value) }

    /// A JSON array of strings.
    public static func array(_ strings: [String]) -> String {
        "[" + strings.map(string).joined(separator: ",") + "]"
    }

    /// A JSON array of already-encoded values.
    public static func array(raw values: [String]) -> String {
        "[" + values.joined(separator: ",") + "]"
    }
}

/// A JSON object under construction: members in the order added.
///
///     var o = JSONObject()
///     o["id"] = "a1"
///     o.add("lat", 47.1, decimals: 7)
///     o.add("inside", ["home"])
///     print(o.text)   // {"id":"a1","lat":47.1,"inside":["home"]}
public struct JSONObject: Sendable {
    private var members: [(key: String, value: String)] = []

    public init() {}

    public var isEmpty: Bool { members.isEmpty }

    /// A string member (`null` for nil).
    public subscript(key: String) -> String? {
        get { nil }
        set { members.append((key, newValue.map(JSON.string) ?? "null")) }
    }

    public mutating func add(_ key: String, _ value: String?) {
        members.append((key, value.map(JSON.string) ?? "null"))
    }

    public mutating func add(_ key: String, _ value: Double?, decimals: Int? = nil) {
        members.append((key, value.map { JSON.number($0, decimals: decimals) } ?? "null"))
    }

    public mutating func add(_ key: String, _ value: Int?) {
        members.append((key, value.map(String.init) ?? "null"))
    }

    public mutating func add(_ key: String, _ value: Bool) {
        members.append((key, value ? "true" : "false"))
    }

    public mutating func add(_ key: String, _ values: [String]) {
        members.append((key, JSON.array(values)))
    }

    public mutating func add(_ key: String, _ object: JSONObject) {
        members.append((key, object.text))
    }

    /// A member whose value is already JSON text.
    public mutating func add(_ key: String, raw value: String) {
        members.append((key, value))
    }

    /// Every member of `other`, after this one's.
    public mutating func append(_ other: JSONObject) {
        members += other.members
    }

    /// `{"k":v,…}` on one line.
    public var text: String {
        "{" + members.map { JSON.string($0.key) + ":" + $0.value }.joined(separator: ",") + "}"
    }

    /// One member per line, two spaces in (nested values stay on their line), and a final newline.
    public var multilineText: String {
        guard !members.isEmpty else { return "{}\n" }
        return "{\n" + members.map { "  " + JSON.string($0.key) + ": " + $0.value }.joined(separator: ",\n") + "\n}\n"
    }
}
