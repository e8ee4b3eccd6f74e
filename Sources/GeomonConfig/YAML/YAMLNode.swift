/// A node of a parsed YAML document, with its 1-based source position.
///
/// Our own tree (not `Codable`): the profile loader walks it and reports diagnostics at the
/// exact node. Columns count Unicode scalars. Aliases are already expanded (within a budget).
public struct YAMLNode: Sendable {
    /// How a scalar was written; only plain scalars can be numbers, booleans or null.
    public enum ScalarStyle: Sendable, Equatable {
        case plain
        case quoted
        case block
    }

    /// One `key: value` entry of a mapping; the key node keeps its own position.
    public struct Pair: Sendable {
        public var key: YAMLNode
        public var value: YAMLNode
    }

    public enum Kind: Sendable {
        case scalar(String, ScalarStyle)
        case mapping([Pair])
        case sequence([YAMLNode])
    }

    public var kind: Kind
    /// 1-based line of the node's first character.
    public var line: Int
    /// 1-based column (Unicode scalars) of the node's first character.
    public var column: Int
    /// An explicit tag such as `!!str`, when one was written.
    public var tag: String?
    /// The anchor's name when this node was written as an alias (`*home`). Only the alias node
    /// itself takes the alias's position; the nodes inside keep the anchored text's positions.
    public var alias: String?

    public init(_ kind: Kind, line: Int, column: Int, tag: String? = nil) {
        self.kind = kind
        self.line = line
        self.column = column
        self.tag = tag
    }

    /// The number of items, when this is a sequence.
    public var sequenceCount: Int? {
        if case .sequence(let items) = kind { return items.count }
        return nil
    }

    /// The scalar text, when this is a scalar.
    public var scalar: String? {
        if case .scalar(let text, _) = kind { return text }
        return nil
    }

    /// True for a plain `null`, `~`, `Null`, `NULL` or an empty plain scalar.
    public var isNull: Bool {
        if case .scalar(let text, .plain) = kind, tag == nil {
            return text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
        }
        return false
    }

    /// True for YAML's merge key: a plain, untagged `<<`.
    public var isMergeKey: Bool {
        if case .scalar("<<", .plain) = kind { return tag == nil }
        return false
    }

    /// A short noun for the node's kind, used in "expected X, got Y" messages.
    public var kindDescription: String {
        switch kind {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .scalar(let text, let style):
            if isNull { return "null" }
            if style != .plain { return "a quoted string \"\(text.clipped)\"" }
            return "'\(text.clipped)'"
        }
    }
}

extension String {
    /// At most 60 Unicode scalars, with "…" when cut: user text echoed in messages stays short.
    var clipped: String {
        let scalars = unicodeScalars
        guard scalars.count > 60 else { return self }
        return String(String.UnicodeScalarView(scalars.prefix(59))) + "…"
    }
}
