/// Decimal text of numbers, without Foundation or the C locale: the one way geomon writes a
/// number in JSON, tables, logs and explanations.
public enum NumberText {
    /// `value` rounded half away from zero to `digits` decimals.
    public static func rounded(_ value: Double, _ digits: Int) -> Double {
        guard value.isFinite else { return value }
        var scale = 1.0
        for _ in 0..<max(0, digits) { scale *= 10 }
        let r = (value * scale).rounded() / scale
        return r == 0 ? 0 : r   // no "-0"
    }

    /// The shortest decimal that reads back as `value`, without exponent: `20.9` (not
    /// `20.900000000000002` once rounded), `5` (not `5.0`); from 1e21 on (as JavaScript) with
    /// one (`1e+300`). Non-finite values: `nan`, `inf`, `-inf` (callers writing JSON use
    /// `JSON.number`, which writes `null`).
    public static func shortest(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
        if value == 0 { return "0" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = String(value)
        if !text.contains("e") && !text.contains("E") { return text.hasSuffix(".0") ? String(text.dropLast(2)) : text }
        if abs(value) >= 1e21 { return text }
        if abs(value) >= 1e15 {
            // An integer of 16 to 21 digits: the significant digits and the zeros after them.
            let parts = text.split(separator: "e")
            let exponent = Int(parts[1]) ?? 0
            let negative = parts[0].hasPrefix("-")
            var digits = parts[0].filter { $0 != "." && $0 != "-" }
            while digits.count < exponent + 1 { digits += "0" }
            return (negative ? "-" : "") + digits
        }
        // |x| < 1e-4 or huge: fixed notation with nine decimals, trailing zeros dropped.
        var digits = String(Int64((value * 1e9).rounded()))
        let negative = digits.hasPrefix("-")
        if negative { digits.removeFirst() }
        while digits.count < 10 { digits = "0" + digits }
        var result = String(digits.dropLast(9)) + "." + String(digits.suffix(9))
        while result.hasSuffix("0") { result.removeLast() }
        if result.hasSuffix(".") { result.removeLast() }
        return result == "0" ? "0" : (negative ? "-" : "") + result
    }

    /// `value` with exactly `digits` decimals (`fixed(3.14159, 2)` → `"3.14"`), for tables
    /// whose columns line up. Non-finite: `nan`, `inf`, `-inf`, as `shortest` (JSON writes
    /// `null` through `JSON.number`).
    public static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return shortest(value) }
        var scale = 1.0
        for _ in 0..<max(0, digits) { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let negative = value < 0 && scaled > 0
        let whole = (scaled / scale).rounded(.down)
        var text = whole < 1e18 ? String(Int64(whole)) : String(whole)
        if digits > 0 {
            let frac = Int64(scaled - whole * scale)
            let fracText = String(frac)
            text += "." + String(repeating: "0", count: max(0, digits - fracText.count)) + fracText
        }
        return negative ? "-" + text : text
    }

    /// Rounded to `digits` decimals, then shortest: `metres(30.400000000000002)` → `"30.4"`.
    public static func short(_ value: Double, _ digits: Int) -> String {
        shortest(rounded(value, digits))
    }
}
