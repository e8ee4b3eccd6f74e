public import GeomonCore

/// Byte offsets of a text file turned into `file:line:column` (1-based; columns count Unicode
/// scalars; a leading byte order mark does not count).
struct TextPositions {
    let file: String
    private let bytes: [UInt8]
    private let lineStarts: [Int]

    init(file: String, bytes: [UInt8]) {
        self.file = file
        self.bytes = bytes
        var starts = [0]
        for (k, byte) in bytes.enumerated() where byte == 0x0A { starts.append(k + 1) }
        lineStarts = starts
    }

    func location(_ offset: Int) -> SourceLocation {
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        var column = 1
        var k = lineStarts[lo]
        if k == 0, bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { k = 3 }
        let end = min(offset, bytes.count)
        while k < end {
            // Count scalars: every byte that does not continue a UTF-8 sequence.
            if bytes[k] & 0xC0 != 0x80 { column += 1 }
            k += 1
        }
        return SourceLocation(file: file, line: lo + 1, column: column)
    }
}
