/// The one reader of a JSON string's text, for every JSON reader geomon has (GeoJSON fences,
/// place files and OwnTracks commands, flat JSON lines): the escapes of RFC 8259 §7, `\uXXXX`
/// with surrogate pairs, and a lone surrogate (which a Swift String cannot hold) as U+FFFD.
public enum JSONStringText {
    /// Why the bytes are not a JSON string, and where (a byte offset into the buffer).
    public struct Failure: Error, Equatable, Sendable {
        public var offset: Int
        public var reason: String
    }

    /// The string whose opening quote is at `quote`: its text, and the index just after its
    /// closing quote.
    public static func read(_ p: UnsafeBufferPointer<UInt8>, quote: Int) throws(Failure) -> (text: String, end: Int) {
        let n = p.count
        var i = quote + 1
        // The common case: no escape, so the text is the bytes up to the closing quote.
        var end = i
        while end < n, p[end] != 0x22, p[end] != 0x5C, p[end] >= 0x20 { end += 1 }
        if end < n, p[end] == 0x22 {
            return (String(decoding: UnsafeBufferPointer(rebasing: p[i..<end]), as: UTF8.self), end + 1)
        }
        var out = Array(p[i..<end])
        i = end
        while i < n {
            let c = p[i]
            if c == 0x22 { return (String(decoding: out, as: UTF8.self), i + 1) }
            if c < 0x20 { throw Failure(offset: i, reason: "control character in a string") }
            if c != 0x5C {
                out.append(c)
                i += 1
                continue
            }
            guard i + 1 < n else { break }
            let escape = p[i + 1]
            switch escape {
            case 0x22, 0x5C, 0x2F: out.append(escape)
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                guard var scalar = hex4(p, at: i + 2) else { throw Failure(offset: i, reason: "invalid \\u escape in a string") }
                i += 4
                // A high surrogate and a low one after it: one scalar. Anything else: the
                // surrogate alone, replaced.
                if (0xD800..<0xDC00).contains(scalar), i + 7 < n, p[i + 2] == 0x5C, p[i + 3] == 0x75,
                   let low = hex4(p, at: i + 4), (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                out.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            default:
                throw Failure(offset: i, reason: "invalid escape in a string")
            }
            i += 2
        }
        throw Failure(offset: quote, reason: "unterminated string")
    }

    /// The four hex digits at `at`, or nil.
    private static func hex4(_ p: UnsafeBufferPointer<UInt8>, at: Int) -> UInt32? {
        guard at + 4 <= p.count else { return nil }
        var value: UInt32 = 0
        for k in 0..<4 {
            let c = p[at + k]
            let digit: UInt8
            switch c {
            case 0x30...0x39: digit = c - 0x30
            case 0x41...0x46: digit = c - 0x41 + 10
            case 0x61...0x66: digit = c - 0x61 + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
