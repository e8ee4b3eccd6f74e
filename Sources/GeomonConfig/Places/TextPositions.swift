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
        let column = bytes.withUnsafeBufferPointer { Self.column(in: $0, lineStart: lineStarts[lo], offset: offset) }
        return SourceLocation(file: file, line: lo + 1, column: column)
    }

    /// The 1-based column of `offset` in the line starting at `lineStart`, in Unicode scalars
    /// (every byte that does not continue a UTF-8 sequence); a leading byte order mark does
    /// not count.
    static func column(in p: UnsafeBufferPointer<UInt8>, lineStart: Int, offset: Int) -> Int {
        var column = 1
        var k = lineStart
        if k == 0, p.count >= 3, p[0] == 0xEF, p[1] == 0xBB, p[2] == 0xBF { k = 3 }
        let end = min(offset, p.count)
        while k < end {
            if p[k] & 0xC0 != 0x80 { column += 1 }
            k += 1
        }
        return column
    }
}
