/// Builds SVG text with fixed, locale-free number formatting (one decimal, no trailing ".0"),
/// so the same drawing always produces the same bytes.
struct SVGWriter {
    private(set) var text: String = ""

    init() {
        text.reserveCapacity(1 << 16)
    }

    mutating func line(_ s: String) {
        text += s
        text += "\n"
    }

    /// `<text>` with an escaped body.
    mutating func label(
        _ body: String, x: Double, y: Double, size: Double = 11, anchor: String = "start",
        cls: String = "label", extra: String = ""
    ) {
        line("<text class=\"\(cls)\" x=\"\(Self.n(x))\" y=\"\(Self.n(y))\" font-size=\"\(Self.n(size))\" text-anchor=\"\(anchor)\"\(extra)>\(Self.escape(body))</text>")
    }

    /// One decimal, rounded half away from zero; "-0" never appears; out-of-range values are
    /// clamped so no input can trap.
    static func n(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let clamped = min(max(value, -1e12), 1e12)
        let tenths = Int64((clamped * 10).rounded())
        if tenths == 0 { return "0" }
        let magnitude = tenths.magnitude
        let whole = String(magnitude / 10)
        let fraction = magnitude % 10
        return (tenths < 0 ? "-" : "") + (fraction == 0 ? whole : whole + "." + String(fraction))
    }

    /// Escapes XML specials and replaces characters XML 1.0 forbids.
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                let v = scalar.value
                if (v < 0x20 && v != 0x09 && v != 0x0A && v != 0x0D) || (0xFFFE...0xFFFF).contains(v) {
                    out += "?"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// Shortens long labels to `limit` characters with an ellipsis.
    static func shorten(_ s: String, limit: Int = 28) -> String {
        s.count <= limit ? s : String(s.prefix(limit - 1)) + "…"
    }

    /// Estimated width of a label in the system sans-serif font.
    static func textWidth(_ s: String, size: Double) -> Double {
        Double(s.count) * size * 0.6
    }
}
