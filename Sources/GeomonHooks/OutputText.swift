/// A hook's output as text a person can read in a log line or a terminal: valid UTF-8 stays,
/// invalid bytes and control characters become `\xNN`, and lines are cut to a bounded length.
public enum OutputText {
    /// Bytes of one line shown at most (the rest becomes "… (N more bytes)").
    public static let lineLimit = 300
    /// Lines of one stream `excerpt` shows at most: the first and last half of this.
    public static let excerptLines = 20

    /// One line of output (no newline inside) as readable text, at most `limit` input bytes.
    public static func line<C: Collection>(_ bytes: C, limit: Int = lineLimit) -> String where C.Element == UInt8 {
        let bytes = Array(bytes)
        let cut = min(bytes.count, limit)
        var text = ""
        var i = 0
        while i < cut {
            let b = bytes[i]
            let length = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0
            if length == 1 {
                if b == 9 {
                    text += "\t"
                } else if b < 0x20 || b == 0x7F {
                    text += escape(b)
                } else {
                    text.unicodeScalars.append(Unicode.Scalar(b))
                }
                i += 1
                continue
            }
            if length > 1, i + length <= cut,
               let scalar = String(validating: bytes[i..<(i + length)], as: UTF8.self)?.unicodeScalars.first,
               !(0x80...0x9F).contains(scalar.value) {
                text.unicodeScalars.append(scalar)
                i += length
                continue
            }
            text += escape(b)
            i += 1
        }
        if bytes.count > cut { text += "… (\(bytes.count - cut) more bytes)" }
        return text
    }

    /// The lines of one stream (LF, CRLF or CR separated; a final newline ends the last line),
    /// each as `line`; with more than `maxLines`, the first and last halves and a count between.
    public static func excerpt(_ bytes: [UInt8], maxLines: Int = excerptLines, lineLimit: Int = lineLimit) -> [String] {
        var lines = bytes.split(omittingEmptySubsequences: false) { $0 == 10 }.map { line in
            line.last == 13 ? line.dropLast() : line
        }
        if bytes.last == 10 { lines.removeLast() }
        guard lines.count > maxLines else { return lines.map { line($0, limit: lineLimit) } }
        let head = maxLines / 2, tail = maxLines - head
        return lines.prefix(head).map { line($0, limit: lineLimit) }
            + ["… (\(lines.count - maxLines) lines omitted)"]
            + lines.suffix(tail).map { line($0, limit: lineLimit) }
    }

    /// The last line with something other than blanks in it, as `line`.
    public static func lastLine(_ bytes: [UInt8], limit: Int = lineLimit) -> String? {
        let lines = bytes.split { $0 == 10 || $0 == 13 }
        guard let last = lines.last(where: { !$0.allSatisfy { $0 == 32 || $0 == 9 } }) else { return nil }
        return line(last, limit: limit)
    }

    private static func escape(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "\\x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
    }
}
