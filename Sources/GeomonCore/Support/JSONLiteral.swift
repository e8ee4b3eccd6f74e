/// JSON literals, written the same way everywhere geomon prints JSON (events, status, hook
/// stdin, diagnostics): deterministic, no Foundation.
public enum JSONLiteral {
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

    /// Shortest round-trip decimal text without exponent; integral values without `.0`;
    /// `null` for non-finite values.
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = String(value)
        if !text.contains("e") && !text.contains("E") { return text }
        // Rare (|x| < 1e-4 or huge): fixed notation with nine decimals.
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
