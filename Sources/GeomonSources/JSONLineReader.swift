/// What every JSON-lines reader shares: lines from chunks of any size, blank lines ignored,
/// every other line parsed as one flat JSON object and handed to the reader's decoding; a line
/// that is not one, or that the decoding rejects, is skipped and counted by reason.
struct JSONLineReader: Sendable {
    /// Counts of skipped lines by reason.
    private(set) var skipped: [String: Int] = [:]
    /// The last problem seen, as `line N: reason`.
    private(set) var lastError: String?
    /// Lines seen so far.
    private(set) var lineNumber = 0
    private var buffer = LineBuffer()

    /// The decoded values of the complete lines in `bytes`, in order. `decode` may call
    /// `reject` on the reader it is given (it then returns nil).
    mutating func feed<T>(_ bytes: [UInt8], _ decode: (inout JSONLineReader, FlatJSONObject) -> T?) -> [T] {
        var values: [T] = []
        bytes.withUnsafeBufferPointer { feed($0, decode) { values.append($0) } }
        return values
    }

    /// Hands each decoded value of the complete lines in `bytes` to `yield`, in order.
    mutating func feed<T>(_ bytes: UnsafeBufferPointer<UInt8>, _ decode: (inout JSONLineReader, FlatJSONObject) -> T?,
                          yield: (T) -> Void) {
        // The buffer is moved out while its lines are parsed (which mutates self), not copied.
        var buffer = LineBuffer()
        swap(&buffer, &self.buffer)
        defer { swap(&buffer, &self.buffer) }
        buffer.append(bytes, line: { line in
            if let value = parse(line, decode) { yield(value) }
        }, overflowed: { overlong() })
    }

    /// An over-long line, discarded: it counts as a line, so the errors after it name theirs.
    private mutating func overlong() {
        lineNumber += 1
        reject("line too long", reason: "garbage")
    }

    /// Ends the input: the decoded value of a trailing line without newline, if any.
    mutating func finish<T>(_ decode: (inout JSONLineReader, FlatJSONObject) -> T?) -> [T] {
        var buffer = LineBuffer()
        swap(&buffer, &self.buffer)
        defer { swap(&buffer, &self.buffer) }
        guard let last = buffer.finish(overflowed: { overlong() }) else { return [] }
        return parse(last, decode).map { [$0] } ?? []
    }

    mutating func reject(_ message: String, reason: String) {
        skipped[reason, default: 0] += 1
        lastError = "line \(lineNumber): \(message)"
    }

    /// Counts a value the decoding dropped from a line it still uses (a speed out of range).
    mutating func dropped(_ message: String, reason: String) {
        skipped[reason, default: 0] += 1
        lastError = "line \(lineNumber): \(message)"
    }

    private mutating func parse<T>(_ line: [UInt8], _ decode: (inout JSONLineReader, FlatJSONObject) -> T?) -> T? {
        line.withUnsafeBufferPointer { parse($0, decode) }
    }

    private mutating func parse<T>(_ line: UnsafeBufferPointer<UInt8>, _ decode: (inout JSONLineReader, FlatJSONObject) -> T?) -> T? {
        lineNumber += 1
        if line.allSatisfy({ $0 == 32 || $0 == 9 }) { return nil }
        let object: FlatJSONObject
        do {
            object = try FlatJSON.parseObject(line)
        } catch {
            switch error { case .invalid(let why): reject(why, reason: "malformed") }
            return nil
        }
        return decode(&self, object)
    }
}
