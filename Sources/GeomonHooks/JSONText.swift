import GeomonCore

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
        JSONLiteral.string(text)
    }

    /// A JSON array of strings.
    public static func array(_ items: [String]) -> String {
        "[" + items.map(quote).joined(separator: ",") + "]"
    }

    /// Shortest round-trip decimal text, without exponent; `null` for non-finite values.
    public static func number(_ value: Double) -> String {
        JSONLiteral.number(value)
    }
}
