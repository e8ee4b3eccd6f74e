import GeomonCore

/// Byte offsets of a text file turned into `file:line:column` (1-based; columns count Unicode
/// scalars; a leading byte order mark does not count).
struct TextPositions {
    let file: String
    private let bytes: [UInt8]
    private let lineStarts: [Int]

    /// The last answer, where a place file's readers ask in ascending order: the next column
    /// on the same line counts on from there, so a file on one line (a minified API export)
    /// is located in one pass, not one per place.
    private final class Last {
        var lineStart = -1
        var offset = 0
        var column = 1
    }
    private let last = Last()

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
        let start = lineStarts[lo]
        let column = bytes.withUnsafeBufferPointer { p in
            if last.lineStart == start, last.offset <= offset, !(start == 0 && last.offset < 3) {
                return last.column + Self.scalars(in: p, from: last.offset, to: offset)
            }
            return Self.column(in: p, lineStart: start, offset: offset)
        }
        last.lineStart = start
        last.offset = offset
        last.column = column
        return SourceLocation(file: file, line: lo + 1, column: column)
    }

    /// Unicode scalars that begin in `from..<to` (bytes that do not continue a UTF-8 sequence).
    private static func scalars(in p: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int {
        var count = 0
        var k = from
        let end = min(to, p.count)
        while k < end {
            if p[k] & 0xC0 != 0x80 { count += 1 }
            k += 1
        }
        return count
    }

    /// The 1-based column of `offset` in the line starting at `lineStart`, in Unicode scalars
    /// (every byte that does not continue a UTF-8 sequence); a leading byte order mark does
    /// not count.
    static func column(in p: UnsafeBufferPointer<UInt8>, lineStart: Int, offset: Int) -> Int {
        let bom = lineStart == 0 && p.count >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF
        return 1 + scalars(in: p, from: bom ? 3 : lineStart, to: offset)
    }
}
