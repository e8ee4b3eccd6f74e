import GeomonFormat

/// A JSON document as a tree whose every value keeps the byte offset it starts at, for files
/// read whole whose problems are reported at `file:line:column` (OwnTracks waypoints, Traccar
/// geofences). Numbers are parsed exactly (`JSONCursor.number`); objects keep their members
/// in order (a repeated key: the last one wins on lookup, as in JavaScript).
struct JSONTree {
    indirect enum Value {
        case object([(key: String, value: JSONTree.Node)])
        case array([JSONTree.Node])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    struct Node {
        let value: Value
        let offset: Int

        subscript(key: String) -> Node? {
            guard case .object(let members) = value else { return nil }
            return members.last { $0.key == key }?.value
        }

        var string: String? {
            if case .string(let s) = value { return s }
            return nil
        }

        var number: Double? {
            if case .number(let d) = value { return d }
            return nil
        }

        var array: [Node]? {
            if case .array(let items) = value { return items }
            return nil
        }

        var isNull: Bool {
            if case .null = value { return true }
            return false
        }

        var isObject: Bool {
            if case .object = value { return true }
            return false
        }

        /// What kind of value this is, for messages ("a string", "an array", …).
        var kind: String {
            switch value {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .bool: "a boolean"
            case .null: "null"
            }
        }
    }

    /// Parses a whole document (one value, whitespace around it); the error has its offset.
    static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> Node {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) -> Node in
            var parser = Parser(cursor: JSONCursor(buffer, at: 0), n: buffer.count)
            // A byte order mark is not JSON, but editors write one.
            if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { parser.cursor.j = 3 }
            parser.cursor.skipSpace()
            let node = try parser.value(depth: 0)
            parser.cursor.skipSpace()
            guard parser.cursor.j == buffer.count else { throw JSONSyntaxError(offset: parser.cursor.j, message: "unexpected text after the JSON value") }
            return node
        }
    }

    private struct Parser {
        var cursor: JSONCursor
        let n: Int
        static let maxDepth = 200

        var p: UnsafeBufferPointer<UInt8> { cursor.p }

        mutating func value(depth: Int) throws(JSONSyntaxError) -> Node {
            let start = cursor.j
            guard start < n else { throw JSONSyntaxError(offset: start, message: "unexpected end of the file") }
            guard depth < Self.maxDepth else { throw JSONSyntaxError(offset: start, message: "nested more than \(Self.maxDepth) deep") }
            switch p[start] {
            case 0x7B: // {
                cursor.j += 1
                var members: [(key: String, value: Node)] = []
                cursor.skipSpace()
                if cursor.j < n, p[cursor.j] == 0x7D { cursor.j += 1; return Node(value: .object(members), offset: start) }
                while true {
                    cursor.skipSpace()
                    guard cursor.j < n, p[cursor.j] == 0x22 else { throw JSONSyntaxError(offset: cursor.j, message: "expected a string key") }
                    let key = try string()
                    cursor.skipSpace()
                    guard cursor.j < n, p[cursor.j] == 0x3A else { throw JSONSyntaxError(offset: cursor.j, message: "expected ':'") }
                    cursor.j += 1
                    cursor.skipSpace()
                    members.append((key, try value(depth: depth + 1)))
                    cursor.skipSpace()
                    guard cursor.j < n else { throw JSONSyntaxError(offset: start, message: "unterminated object") }
                    if p[cursor.j] == 0x2C { cursor.j += 1; continue }
                    if p[cursor.j] == 0x7D { cursor.j += 1; return Node(value: .object(members), offset: start) }
                    throw JSONSyntaxError(offset: cursor.j, message: "expected ',' or '}'")
                }
            case 0x5B: // [
                cursor.j += 1
                var items: [Node] = []
                cursor.skipSpace()
                if cursor.j < n, p[cursor.j] == 0x5D { cursor.j += 1; return Node(value: .array(items), offset: start) }
                while true {
                    cursor.skipSpace()
                    items.append(try value(depth: depth + 1))
                    cursor.skipSpace()
                    guard cursor.j < n else { throw JSONSyntaxError(offset: start, message: "unterminated array") }
                    if p[cursor.j] == 0x2C { cursor.j += 1; continue }
                    if p[cursor.j] == 0x5D { cursor.j += 1; return Node(value: .array(items), offset: start) }
                    throw JSONSyntaxError(offset: cursor.j, message: "expected ',' or ']'")
                }
            case 0x22:
                return Node(value: .string(try string()), offset: start)
            case 0x74: try literal("true"); return Node(value: .bool(true), offset: start)
            case 0x66: try literal("false"); return Node(value: .bool(false), offset: start)
            case 0x6E: try literal("null"); return Node(value: .null, offset: start)
            case 0x2D, 0x30...0x39:
                // JSON has no leading zeros (`010`): a file with one was not written as JSON.
                let digits = p[start] == 0x2D ? start + 1 : start
                if digits + 1 < n, p[digits] == 0x30, (0x30...0x39).contains(p[digits + 1]) {
                    throw JSONSyntaxError(offset: start, message: "a number with a leading zero")
                }
                let number = try cursor.number()
                guard number.isFinite else { throw JSONSyntaxError(offset: start, message: "number out of range") }
                return Node(value: .number(number), offset: start)
            default:
                throw JSONSyntaxError(offset: start, message: "expected a JSON value")
            }
        }

        private mutating func literal(_ word: String) throws(JSONSyntaxError) {
            let bytes = Array(word.utf8)
            guard cursor.j + bytes.count <= n, (0..<bytes.count).allSatisfy({ p[cursor.j + $0] == bytes[$0] }) else {
                throw JSONSyntaxError(offset: cursor.j, message: "invalid literal")
            }
            cursor.j += bytes.count
        }

        /// A string at '"', unescaped (`JSONStringText`).
        mutating func string() throws(JSONSyntaxError) -> String {
            do {
                let (text, end) = try JSONStringText.read(p, quote: cursor.j)
                cursor.j = end
                return text
            } catch {
                throw JSONSyntaxError(offset: error.offset, message: error.reason)
            }
        }
    }
}
