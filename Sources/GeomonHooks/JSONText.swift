/// A tiny deterministic JSON writer (fixed key order, no Foundation), enough for hook stdin.
public struct JSONText: Sendable {
    private var fields: [(String, String)] = []

    public init() {}

    public mutating func add(_ key: String, _ value: String?) {
        fields.append((key, value.map(JSONText.quote) ?? "null"))
    }

    public mutating func add(_ key: String, number value: Double?) {
        fields.append((key, value.map(JSONText.number) ?? "null"))
    }

    public mutating func add(_ key: String, int value: Int) {
        fields.append((key, String(value)))
    }

    public mutating func add(_ key: String, bool value: Bool) {
        fields.append((key, value ? "true" : "false"))
    }

    /// Adds an already-encoded JSON value.
    public mutating func add(_ key: String, raw value: String) {
        fields.append((key, value))
    }

    /// `{"k":v,...}` on one line.
    public var text: String {
        "{" + fields.map { JSONText.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// A JSON string literal with the mandatory escapes.
    public static func quote(_ text: String) -> String {
        var out = "\""
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

    /// A JSON array of strings.
    public static func array(_ items: [String]) -> String {
        "[" + items.map(quote).joined(separator: ",") + "]"
    }

    /// Shortest round-trip decimal text, without exponent; `null` for non-finite values.
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = String(value)
        if !text.contains("e") && !text.contains("E") { return text }
        // Rare (|x| < 1e-4 or huge): fixed notation with enough digits for coordinates.
        var fixed = String(Int64((value * 1e9).rounded()))
        let negative = fixed.hasPrefix("-")
        if negative { fixed.removeFirst() }
        while fixed.count < 10 { fixed = "0" + fixed }
        var result = String(fixed.dropLast(9)) + "." + String(fixed.suffix(9))
        while result.hasSuffix("0") { result.removeLast() }
        if result.hasSuffix(".") { result.removeLast() }
        return (negative ? "-" : "") + result
    }
}
