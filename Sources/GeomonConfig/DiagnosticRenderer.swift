import GeomonCore
import GeomonFormat

/// Renders diagnostics for people (clang style, with the source line and a caret) or for
/// tools (JSON).
public enum DiagnosticRenderer {
    /// One diagnostic per block: `path:line:col: severity: message`, then (when the file
    /// can be read and the line is short) the source line and a `^` under the column.
    public static func text(_ diagnostics: [Diagnostic], snippets: Bool = true) -> String {
        var cache: [String: [String]?] = [:]
        var out = ""
        for diagnostic in diagnostics {
            out += diagnostic.description + "\n"
            guard snippets, let location = diagnostic.location else { continue }
            if cache[location.file] == nil {
                if case .success(let bytes) = FileBytes.read(location.file, limit: 16 * 1024 * 1024) {
                    cache[location.file] = .some(lines(of: bytes))
                } else {
                    cache[location.file] = .some(nil)
                }
            }
            guard let lines = cache[location.file] ?? nil, location.line >= 1, location.line <= lines.count else { continue }
            var line = lines[location.line - 1]
            if line.hasPrefix("\u{FEFF}") { line.removeFirst() }
            // No snippet for long, empty or binary-looking lines.
            guard line.unicodeScalars.count <= 240, !line.isEmpty,
                  !line.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0 == "\u{FFFD}" || $0.value == 0x7F })
            else { continue }
            let scalars = Array(line.unicodeScalars)
            var caret = ""
            for k in 0..<max(0, min(location.column - 1, scalars.count)) {
                caret.append(scalars[k] == "\t" ? "\t" : " ")
            }
            out += line + "\n" + caret + "^\n"
        }
        return out
    }

    /// The lines of a text, split at LF, CR LF and a lone CR (YAML's line breaks), without
    /// their breaks. Split as bytes: a String holds CR LF as one character.
    static func lines(of bytes: [UInt8]) -> [String] {
        var lines: [String] = []
        var start = 0
        var k = 0
        while k < bytes.count {
            let byte = bytes[k]
            if byte == 0x0A || byte == 0x0D {
                lines.append(String(decoding: bytes[start..<k], as: UTF8.self))
                if byte == 0x0D, k + 1 < bytes.count, bytes[k + 1] == 0x0A { k += 1 }
                start = k + 1
            }
            k += 1
        }
        lines.append(String(decoding: bytes[start...], as: UTF8.self))
        return lines
    }

    /// A JSON array of `{"file", "line", "column", "severity", "message"}` objects, one per
    /// line; `line` and `column` are null for diagnostics without a position (and `file` for
    /// those about no file).
    public static func json(_ diagnostics: [Diagnostic]) -> String {
        if diagnostics.isEmpty { return "[]\n" }
        let objects = diagnostics.map { d -> String in
            var o = JSONObject()
            o.add("file", d.location?.file ?? d.file)
            o.add("line", d.location?.line)
            o.add("column", d.location?.column)
            o.add("severity", d.severity.rawValue)
            o.add("message", d.message)
            return "  " + o.text
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }

    /// A JSON string literal.
    public static func quote(_ text: String) -> String {
        JSON.string(text)
    }
}
