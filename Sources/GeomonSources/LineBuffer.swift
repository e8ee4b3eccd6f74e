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

    /// Appends a chunk and calls `line` with each complete line in it (without terminators;
    /// empty lines included, so callers can number lines), and `overflowed` for each over-long
    /// line discarded. A line within the chunk is handed over in place, without a copy.
    mutating func append(_ chunk: UnsafeBufferPointer<UInt8>, line: (UnsafeBufferPointer<UInt8>) -> Void,
                         overflowed: () -> Void = {}) {
        var start = 0
        var i = 0
        while i < chunk.count {
            let c = chunk[i]
            guard c == 10 || c == 13 else { i += 1; continue }
            let isCRLFTail = c == 10 && lastWasCR && i == start && carry.isEmpty
            lastWasCR = c == 13
            if !isCRLFTail {
                if overflowing {
                    overflowing = false
                    overflowed()
                } else if carry.isEmpty {
                    line(UnsafeBufferPointer(rebasing: chunk[start..<i]))
                } else {
                    carry.append(contentsOf: chunk[start..<i])
                    carry.withUnsafeBufferPointer { line($0) }
                }
                carry.removeAll(keepingCapacity: true)
            }
            start = i + 1
            i += 1
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
    }

    /// The trailing line without a terminator, if any; `overflowed` is called when it was too
    /// long (discarded, as a terminated one is).
    mutating func finish(overflowed: () -> Void = {}) -> [UInt8]? {
        defer { carry.removeAll(); overflowing = false; lastWasCR = false }
        if overflowing { overflowed() }
        return carry.isEmpty || overflowing ? nil : carry
    }
}
