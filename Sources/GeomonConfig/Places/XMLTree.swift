import GeomonCore

/// A small XML reader for place files read whole (KML, GPX waypoints): elements with their
/// attributes, text (character data and CDATA, entities decoded) and children, each with the
/// byte offset it starts at for `file:line:column` messages. Comments, processing
/// instructions and the document type are skipped; namespaces are not resolved (`localName`
/// drops the prefix, which is how KML and GPX files differ in practice).
struct XMLTree {
    final class Element {
        let name: String
        let offset: Int
        var attributes: [(name: String, value: String)] = []
        var children: [Element] = []
        var text = ""

        init(name: String, offset: Int) {
            self.name = name
            self.offset = offset
        }

        /// The name without its namespace prefix (`gpxx:Proximity` → `Proximity`).
        var localName: Substring {
            guard let colon = name.lastIndex(of: ":") else { return Substring(name) }
            return name[name.index(after: colon)...]
        }

        func attribute(_ name: String) -> String? {
            attributes.last { $0.name == name }?.value
        }

        /// The first child with this local name.
        func child(_ local: String) -> Element? {
            children.first { $0.localName == local }
        }

        func children(_ local: String) -> [Element] {
            children.filter { $0.localName == local }
        }

        /// Every element below this one (depth first, document order) with this local name.
        func descendants(_ local: String) -> [Element] {
            var out: [Element] = []
            var stack = Array(children.reversed())
            while let e = stack.popLast() {
                if e.localName == local { out.append(e) }
                stack.append(contentsOf: e.children.reversed())
            }
            return out
        }

        /// The text of the first child with this local name, trimmed; nil without one.
        func childText(_ local: String) -> String? {
            child(local).map { String($0.text.trimmingWhitespace()) }
        }
    }

    struct SyntaxError: Error {
        var offset: Int
        var message: String
    }

    static let maxDepth = 256

    /// Parses a whole document; the root element.
    static func parse(_ bytes: [UInt8]) throws(SyntaxError) -> Element {
        var parser = Parser(b: bytes)
        return try parser.document()
    }

    private struct Parser {
        let b: [UInt8]
        var i = 0

        func starts(_ s: StaticString) -> Bool {
            let count = s.utf8CodeUnitCount
            guard i + count <= b.count else { return false }
            let p = s.utf8Start
            for k in 0..<count where b[i + k] != p[k] { return false }
            return true
        }

        mutating func skip(past s: StaticString, what: String) throws(SyntaxError) {
            let start = i
            while i < b.count {
                if starts(s) {
                    i += s.utf8CodeUnitCount
                    return
                }
                i += 1
            }
            throw SyntaxError(offset: start, message: "unterminated \(what)")
        }

        static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }
        static func isNameByte(_ c: UInt8) -> Bool {
            !(isSpace(c) || c == 0x2F || c == 0x3E || c == 0x3D || c == 0x3C || c == 0x22 || c == 0x27)
        }

        mutating func skipSpace() {
            while i < b.count, Self.isSpace(b[i]) { i += 1 }
        }

        mutating func name() throws(SyntaxError) -> String {
            let start = i
            while i < b.count, Self.isNameByte(b[i]) { i += 1 }
            guard i > start else { throw SyntaxError(offset: start, message: "expected a name") }
            return String(decoding: b[start..<i], as: UTF8.self)
        }

        mutating func document() throws(SyntaxError) -> Element {
            if b.count >= 3, b[0] == 0xEF, b[1] == 0xBB, b[2] == 0xBF { i = 3 }
            var root: Element?
            var stack: [Element] = []
            while i < b.count {
                if b[i] != 0x3C {
                    let start = i
                    while i < b.count, b[i] != 0x3C { i += 1 }
                    if let top = stack.last {
                        top.text += Self.decode(b[start..<i])
                    } else if !b[start..<i].allSatisfy(Self.isSpace) {
                        throw SyntaxError(offset: start, message: "text outside the root element")
                    }
                    continue
                }
                if starts("<!--") { try skip(past: "-->", what: "comment"); continue }
                if starts("<![CDATA[") {
                    let start = i + 9
                    try skip(past: "]]>", what: "CDATA section")
                    stack.last?.text += String(decoding: b[start..<(i - 3)], as: UTF8.self)
                    continue
                }
                if starts("<?") { try skip(past: "?>", what: "processing instruction"); continue }
                if starts("<!") { try skip(past: ">", what: "declaration"); continue }
                let tagStart = i
                if starts("</") {
                    i += 2
                    let closing = try name()
                    skipSpace()
                    guard i < b.count, b[i] == 0x3E else { throw SyntaxError(offset: i, message: "expected '>' to end </\(closing)>") }
                    i += 1
                    guard let open = stack.popLast() else { throw SyntaxError(offset: tagStart, message: "</\(closing)> closes nothing") }
                    guard open.name == closing else {
                        throw SyntaxError(offset: tagStart, message: "</\(closing)> closes <\(open.name)>")
                    }
                    continue
                }
                i += 1
                let element = Element(name: try name(), offset: tagStart)
                var selfClosing = false
                while true {
                    skipSpace()
                    guard i < b.count else { throw SyntaxError(offset: tagStart, message: "unterminated tag <\(element.name)>") }
                    if b[i] == 0x3E { i += 1; break }
                    if b[i] == 0x2F, i + 1 < b.count, b[i + 1] == 0x3E { i += 2; selfClosing = true; break }
                    let attributeName = try name()
                    skipSpace()
                    guard i < b.count, b[i] == 0x3D else { throw SyntaxError(offset: i, message: "expected '=' after the attribute \(attributeName)") }
                    i += 1
                    skipSpace()
                    guard i < b.count, b[i] == 0x22 || b[i] == 0x27 else { throw SyntaxError(offset: i, message: "expected a quoted value for \(attributeName)") }
                    let quote = b[i]
                    i += 1
                    let start = i
                    while i < b.count, b[i] != quote { i += 1 }
                    guard i < b.count else { throw SyntaxError(offset: start - 1, message: "unterminated attribute value") }
                    element.attributes.append((attributeName, Self.decode(b[start..<i])))
                    i += 1
                }
                if let parent = stack.last {
                    parent.children.append(element)
                } else if root == nil {
                    root = element
                } else {
                    throw SyntaxError(offset: tagStart, message: "a second root element <\(element.name)>")
                }
                if !selfClosing {
                    guard stack.count < XMLTree.maxDepth else { throw SyntaxError(offset: tagStart, message: "nested more than \(XMLTree.maxDepth) deep") }
                    stack.append(element)
                }
            }
            if let open = stack.last { throw SyntaxError(offset: open.offset, message: "<\(open.name)> is never closed") }
            guard let root else { throw SyntaxError(offset: 0, message: "no root element") }
            return root
        }

        /// Character data with its entity and character references decoded (unknown ones kept).
        static func decode(_ bytes: ArraySlice<UInt8>) -> String {
            guard bytes.contains(0x26) else { return String(decoding: bytes, as: UTF8.self) }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            var k = bytes.startIndex
            while k < bytes.endIndex {
                guard bytes[k] == 0x26, let semicolon = bytes[k..<min(bytes.endIndex, k + 12)].firstIndex(of: 0x3B) else {
                    out.append(bytes[k])
                    k += 1
                    continue
                }
                let entity = String(decoding: bytes[(k + 1)..<semicolon], as: UTF8.self)
                var replacement: String?
                switch entity {
                case "lt": replacement = "<"
                case "gt": replacement = ">"
                case "amp": replacement = "&"
                case "quot": replacement = "\""
                case "apos": replacement = "'"
                default:
                    if entity.hasPrefix("#x") || entity.hasPrefix("#X"), let v = UInt32(entity.dropFirst(2), radix: 16) {
                        replacement = Unicode.Scalar(v).map { String(Character($0)) }
                    } else if entity.hasPrefix("#"), let v = UInt32(entity.dropFirst()) {
                        replacement = Unicode.Scalar(v).map { String(Character($0)) }
                    }
                }
                if let replacement {
                    out.append(contentsOf: Array(replacement.utf8))
                    k = semicolon + 1
                } else {
                    out.append(bytes[k])
                    k += 1
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
