import GeomonCore
import CYAML

/// Parses YAML text with libyaml's event API into a `YAMLNode` tree.
///
/// Hardened for hostile input: the text must be UTF-8 without control characters, at most
/// `maxBytes` long, nested at most `maxDepth` deep, and alias expansion ("billion laughs") is
/// bounded by `maxNodes` expanded nodes. Every failure is one diagnostic, never a crash.
public struct YAMLParser: Sendable {
    public var maxBytes: Int = 16 * 1024 * 1024
    public var maxDepth: Int = 256
    public var maxNodes: Int = 1_000_000

    public init() {}

    /// The first document of `bytes`, or diagnostics explaining why there is none.
    /// Warnings (such as a byte order mark) may come with a document.
    public func parse(_ bytes: [UInt8], file: String) -> (root: YAMLNode?, diagnostics: [Diagnostic]) {
        var warnings: [Diagnostic] = []
        if bytes.count > maxBytes {
            return (nil, [.error("file is too large for a profile (\(bytes.count) bytes; the limit is \(maxBytes / (1024 * 1024)) MB)", at: SourceLocation(file: file, line: 1, column: 1))])
        }
        // Lines end in LF, CR LF or CR (an old Mac's files): one form from here on, so every
        // position below counts lines as libyaml does.
        let bytes = TextScan.lineFeedsOnly(bytes)
        if let problem = TextScan.firstProblem(bytes, file: file) {
            return (nil, [problem])
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            warnings.append(.warning("file starts with a UTF-8 byte order mark; it is ignored", at: SourceLocation(file: file, line: 1, column: 1)))
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) || TextScan.isOnlyComments(bytes) {
            return (nil, warnings + [.error("profile is empty", at: SourceLocation(file: file, line: 1, column: 1))])
        }
        let session = ParserSession(limits: self, file: file, bytes: bytes)
        switch session.run() {
        case .success(let root):
            return (root, warnings)
        case .failure(let diagnostic):
            return (nil, warnings + [diagnostic])
        }
    }
}

/// Owns one `yaml_parser_t` for one parse; frees it in `deinit`.
private final class ParserSession {
    enum Outcome {
        case success(YAMLNode)
        case failure(Diagnostic)
    }

    private struct Frame {
        var isMapping: Bool
        var line: Int
        var column: Int
        var tag: String?
        var anchor: String?
        var children: [YAMLNode] = []
        var size: Int = 1
    }

    private let limits: YAMLParser
    private let file: String
    private let bytes: [UInt8]
    private var parser = yaml_parser_t()
    private var initialized = false

    init(limits: YAMLParser, file: String, bytes: [UInt8]) {
        self.limits = limits
        self.file = file
        self.bytes = bytes
        initialized = yaml_parser_initialize(&parser) != 0
    }

    deinit {
        if initialized { yaml_parser_delete(&parser) }
    }

    private func location(_ mark: yaml_mark_t) -> SourceLocation {
        SourceLocation(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    private func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?, _ length: Int? = nil) -> String? {
        guard let pointer else { return nil }
        if let length {
            return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self)
        }
        return String(cString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))
    }

    func run() -> Outcome {
        guard initialized else {
            return .failure(Diagnostic.error("cannot initialize the YAML parser", at: nil))
        }
        return bytes.withUnsafeBufferPointer { buffer in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            return loop()
        }
    }

    private func syntaxError() -> Diagnostic {
        let problem = string(UnsafeMutablePointer(mutating: parser.problem.map { UnsafeRawPointer($0).assumingMemoryBound(to: yaml_char_t.self) })) ?? "unknown error"
        var mark = location(parser.problem_mark)
        if parser.error == YAML_READER_ERROR {
            mark = TextScan.location(ofByte: Int(parser.problem_offset), in: bytes, file: file)
        }
        if let tab = TextScan.firstIndentationTab(bytes, file: file, upToLine: mark.line) {
            return .error("syntax error: tab character in indentation; YAML indents with spaces only", at: tab)
        }
        var message = "syntax error: \(problem)"
        if let context = string(UnsafeMutablePointer(mutating: parser.context.map { UnsafeRawPointer($0).assumingMemoryBound(to: yaml_char_t.self) })) {
            let at = location(parser.context_mark)
            message += " (\(context) at line \(at.line), column \(at.column))"
        }
        return .error(message, at: mark)
    }

    private func loop() -> Outcome {
        var stack: [Frame] = []
        var anchors: [String: (node: YAMLNode, size: Int)] = [:]
        var expanded = 0
        var root: YAMLNode?
        var documents = 0

        func attach(_ node: YAMLNode, size: Int, anchor: String?) -> Diagnostic? {
            expanded += size
            if expanded > limits.maxNodes {
                return .error("document expands to more than \(limits.maxNodes) nodes (alias bomb?); refusing to continue", at: SourceLocation(file: file, line: node.line, column: node.column))
            }
            if let anchor { anchors[anchor] = (node, size) }
            if stack.isEmpty {
                root = node
            } else {
                stack[stack.count - 1].children.append(node)
                stack[stack.count - 1].size += size
            }
            return nil
        }

        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) != 0 else {
                return .failure(syntaxError())
            }
            defer { yaml_event_delete(&event) }
            let start = location(event.start_mark)
            switch event.type {
            case YAML_STREAM_END_EVENT:
                guard let root else {
                    return .failure(Diagnostic.error("profile is empty", at: SourceLocation(file: file, line: 1, column: 1)))
                }
                return .success(root)
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                if documents > 1 {
                    return .failure(Diagnostic.error("a profile is one YAML document; found another document here", at: start))
                }
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let text = string(scalar.value, scalar.length) ?? ""
                let style: YAMLNode.ScalarStyle
                switch scalar.style {
                case YAML_PLAIN_SCALAR_STYLE: style = .plain
                case YAML_LITERAL_SCALAR_STYLE, YAML_FOLDED_SCALAR_STYLE: style = .block
                default: style = .quoted
                }
                let node = YAMLNode(.scalar(text, style), line: start.line, column: start.column, tag: string(scalar.tag))
                if let problem = attach(node, size: 1, anchor: string(scalar.anchor)) { return .failure(problem) }
            case YAML_ALIAS_EVENT:
                let name = string(event.data.alias.anchor) ?? ""
                guard let target = anchors[name] else {
                    return .failure(Diagnostic.error("unknown alias '*\(name)'", at: start))
                }
                var node = target.node
                node.line = start.line
                node.column = start.column
                node.alias = name
                if let problem = attach(node, size: target.size, anchor: nil) { return .failure(problem) }
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                if stack.count >= limits.maxDepth {
                    return .failure(Diagnostic.error("nesting is deeper than \(limits.maxDepth) levels", at: start))
                }
                let isMapping = event.type == YAML_MAPPING_START_EVENT
                let tag = isMapping ? string(event.data.mapping_start.tag) : string(event.data.sequence_start.tag)
                let anchor = isMapping ? string(event.data.mapping_start.anchor) : string(event.data.sequence_start.anchor)
                stack.append(Frame(isMapping: isMapping, line: start.line, column: start.column, tag: tag, anchor: anchor))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                guard let frame = stack.popLast() else {
                    return .failure(Diagnostic.error("syntax error: unbalanced collection end", at: start))
                }
                let kind: YAMLNode.Kind
                if frame.isMapping {
                    var pairs: [YAMLNode.Pair] = []
                    pairs.reserveCapacity(frame.children.count / 2)
                    var i = 0
                    while i + 1 < frame.children.count {
                        pairs.append(YAMLNode.Pair(key: frame.children[i], value: frame.children[i + 1]))
                        i += 2
                    }
                    kind = .mapping(pairs)
                } else {
                    kind = .sequence(frame.children)
                }
                let node = YAMLNode(kind, line: frame.line, column: frame.column, tag: frame.tag)
                // The frame's own node was not counted yet; its children were.
                expanded -= frame.size - 1
                if let problem = attach(node, size: frame.size, anchor: frame.anchor) { return .failure(problem) }
            default:
                break
            }
        }
    }
}

/// Byte-level checks done before libyaml sees the text, with exact positions.
enum TextScan {
    /// `bytes` with every CR LF and lone CR turned into LF (the same bytes when there is no CR).
    static func lineFeedsOnly(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(0x0D) else { return bytes }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x0D {
                result.append(0x0A)
                if i + 1 < bytes.count, bytes[i + 1] == 0x0A { i += 1 }
            } else {
                result.append(bytes[i])
            }
            i += 1
        }
        return result
    }

    /// The first invalid UTF-8 sequence or disallowed control character, as a diagnostic.
    static func firstProblem(_ array: [UInt8], file: String) -> Diagnostic? {
        array.withUnsafeBufferPointer { firstProblem(in: $0, file: file) }
    }

    private static func firstProblem(in bytes: UnsafeBufferPointer<UInt8>, file: String) -> Diagnostic? {
        var line = 1
        var column = 1
        var i = 0
        let n = bytes.count
        if n >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }
        while i < n {
            let b = bytes[i]
            if b < 0x80 {
                if b == 0x0A {
                    line += 1
                    column = 1
                    i += 1
                    continue
                }
                if b < 0x20 && b != 0x09 && b != 0x0D || b == 0x7F {
                    return .error("control character U+\(hex(UInt32(b), width: 4)) is not allowed in a profile (is this a binary file?)", at: SourceLocation(file: file, line: line, column: column))
                }
                i += 1
                column += 1
                continue
            }
            var length = 0
            var scalar: UInt32 = 0
            var minimum: UInt32 = 0
            if b & 0xE0 == 0xC0 { length = 2; scalar = UInt32(b & 0x1F); minimum = 0x80 }
            else if b & 0xF0 == 0xE0 { length = 3; scalar = UInt32(b & 0x0F); minimum = 0x800 }
            else if b & 0xF8 == 0xF0 { length = 4; scalar = UInt32(b & 0x07); minimum = 0x10000 }
            var valid = length > 0 && i + length <= n
            if valid {
                for k in 1..<length {
                    let c = bytes[i + k]
                    if c & 0xC0 != 0x80 { valid = false; break }
                    scalar = scalar << 6 | UInt32(c & 0x3F)
                }
            }
            if valid && (scalar < minimum || scalar > 0x10FFFF || (0xD800...0xDFFF).contains(scalar)) { valid = false }
            guard valid else {
                return .error("file is not valid UTF-8 (byte 0x\(hex(UInt32(b))) at offset \(i)); profiles must be UTF-8 text", at: SourceLocation(file: file, line: line, column: column))
            }
            if (0x80...0x9F).contains(scalar) && scalar != 0x85 || scalar == 0xFFFE || scalar == 0xFFFF {
                return .error("control character U+\(hex(scalar, width: 4)) is not allowed in a profile", at: SourceLocation(file: file, line: line, column: column))
            }
            // YAML 1.1 (libyaml) ends a line at NEL, LS and PS, which no editor shows as an end
            // of line: every position after one would be a line off (a "…" saved as cp1252 and
            // read as Latin-1 is a NEL, ending a comment in the middle).
            if scalar == 0x85 || scalar == 0x2028 || scalar == 0x2029 {
                let what = scalar == 0x85 ? "next line" : scalar == 0x2028 ? "line separator" : "paragraph separator"
                return .error("U+\(hex(scalar, width: 4)) (\(what)) is not allowed in a profile: YAML ends a line there, editors do not",
                              at: SourceLocation(file: file, line: line, column: column))
            }
            i += length
            column += 1
        }
        return nil
    }

    private static func hex(_ value: UInt32, width: Int = 2) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// True when every non-blank line is a comment (or a bare document marker).
    static func isOnlyComments(_ bytes: [UInt8]) -> Bool {
        var atLineStart = true
        var inComment = false
        for b in bytes {
            if b == 0x0A || b == 0x0D { atLineStart = true; inComment = false; continue }
            if inComment { continue }
            if b == 0x20 || b == 0x09 || b == 0x0D || b == 0xEF || b == 0xBB || b == 0xBF { continue }
            if b == UInt8(ascii: "#") && atLineStart { inComment = true; continue }
            return false
        }
        return true
    }

    /// 1-based line and column (Unicode scalars) of a byte offset.
    static func location(ofByte offset: Int, in bytes: [UInt8], file: String) -> SourceLocation {
        var line = 1
        var column = 1
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let end = min(offset, bytes.count)
        while i < end {
            let b = bytes[i]
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return SourceLocation(file: file, line: line, column: column)
    }

    /// The first tab inside a line's leading whitespace, on or before `upToLine`.
    static func firstIndentationTab(_ bytes: [UInt8], file: String, upToLine: Int) -> SourceLocation? {
        var line = 1
        var column = 1
        var leading = true
        for b in bytes {
            if b == 0x0A {
                line += 1
                column = 1
                leading = true
                if line > upToLine { return nil }
                continue
            }
            if leading {
                if b == 0x09 { return SourceLocation(file: file, line: line, column: column) }
                if b != 0x20 && b != UInt8(ascii: "-") { leading = false }
            }
            if b & 0xC0 != 0x80 { column += 1 }
        }
        return nil
    }
}
