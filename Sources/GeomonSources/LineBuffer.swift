/// Splits a byte stream into lines (LF, CR LF or CR), carrying a partial line between chunks.
struct LineBuffer: Sendable {
    private var carry: [UInt8] = []
    private var overflowing = false
    private var lastWasCR = false
    /// Lines longer than this are dropped (and reported by `append` as overflowed).
    let maxLineLength: Int

    init(maxLineLength: Int = 65_536) {
        self.maxLineLength = maxLineLength
    }

    /// Appends a chunk; returns the complete lines in it (without terminators; empty lines
    /// included, so callers can number lines) and how many over-long lines were discarded.
    mutating func append(_ chunk: UnsafeBufferPointer<UInt8>) -> (lines: [[UInt8]], overflowed: Int) {
        var lines: [[UInt8]] = []
        var overflowed = 0
        var start = 0
        for i in 0..<chunk.count where chunk[i] == 10 || chunk[i] == 13 {
            let isCRLFTail = chunk[i] == 10 && lastWasCR && i == start && carry.isEmpty
            lastWasCR = chunk[i] == 13
            if isCRLFTail {
                start = i + 1
                continue
            }
            if overflowing {
                overflowing = false
                overflowed += 1
            } else {
                carry.append(contentsOf: chunk[start..<i])
                lines.append(carry)
            }
            carry.removeAll(keepingCapacity: true)
            start = i + 1
        }
        if start < chunk.count {
            lastWasCR = false
            if !overflowing {
                carry.append(contentsOf: chunk[start..<chunk.count])
                if carry.count > maxLineLength {
                    carry.removeAll()
                    overflowing = true
                }
            }
        }
        return (lines, overflowed)
    }

    mutating func append(_ chunk: [UInt8]) -> (lines: [[UInt8]], overflowed: Int) {
        chunk.withUnsafeBufferPointer { append($0) }
    }

    /// The trailing line without a terminator, if any.
    mutating func finish() -> [UInt8]? {
        defer { carry.removeAll(); overflowing = false; lastWasCR = false }
        return carry.isEmpty || overflowing ? nil : carry
    }
}
