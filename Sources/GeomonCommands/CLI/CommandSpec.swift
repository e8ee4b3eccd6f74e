/// How a shell should complete a value (bash completion, the man page's synopsis).
public enum Completion: Hashable, Sendable {
    case none
    /// A file, optionally with one of these extensions.
    case file([String])
    case directory
    /// One of the option's `choices`.
    case choices
}

/// One declared option: its name, whether it takes a value, and its help.
public struct OptionSpec: Hashable, Sendable {
    public var name: String
    /// The value's placeholder (`PATH`, `SECONDS`); nil for a flag.
    public var value: String?
    public var help: String
    /// Allowed values (checked by the parser when non-empty).
    public var choices: [String]
    /// May be given more than once (every value is kept).
    public var repeatable: Bool
    public var completion: Completion

    public static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: nil, help: help, choices: [], repeatable: false, completion: .none)
    }

    public static func option(_ name: String, _ value: String, _ help: String, completion: Completion = .none, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, value: value, help: help, choices: [], repeatable: repeatable, completion: completion)
    }

    public static func choice(_ name: String, _ choices: [String], _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: choices.joined(separator: "|"), help: help, choices: choices, repeatable: false, completion: .choices)
    }

    public var isFlag: Bool { value == nil }

    /// `--db PATH`, `--always-on`.
    public var synopsis: String { value.map { "\(name) \($0)" } ?? name }
}

/// One positional argument.
public struct ArgumentSpec: Hashable, Sendable {
    public var name: String
    public var help: String
    /// How many: `1` exactly one, `optional` zero or one, `many` one or more, `any` zero or more.
    public var arity: Arity
    public var completion: Completion

    public enum Arity: Hashable, Sendable { case one, optional, many, any }

    public init(_ name: String, _ help: String, arity: Arity = .one, completion: Completion = .none) {
        self.name = name
        self.help = help
        self.arity = arity
        self.completion = completion
    }

    var synopsis: String {
        switch arity {
        case .one: name
        case .optional: "[\(name)]"
        case .many: "\(name)…"
        case .any: "[\(name)…]"
        }
    }
}

/// Everything `--help`, the man page and bash completion say about a command: declared once,
/// next to the command's code.
public struct CommandSpec: Hashable, Sendable {
    /// The words after `geomon` (`replay`, `hooks fire`).
    public var name: String
    /// One line for `geomon --help`.
    public var abstract: String
    /// The paragraphs after the usage line.
    public var discussion: String
    public var options: [OptionSpec]
    public var arguments: [ArgumentSpec]
    /// Options that must be given (shown without brackets in the usage line).
    public var required: Set<String>
    /// Extra usage lines for forms the generated one does not show (e.g. alternatives).
    public var alternativeUsage: [String]

    public init(_ name: String, abstract: String, discussion: String = "", options: [OptionSpec] = [],
                arguments: [ArgumentSpec] = [], required: Set<String> = [], alternativeUsage: [String] = []) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.arguments = arguments
        self.required = required
        self.alternativeUsage = alternativeUsage
    }

    public func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }

    /// The usage lines: `usage: geomon NAME --required X [--optional Y] ARGS…`, wrapped.
    public var usage: [String] {
        let head = "geomon \(name)"
        var words: [String] = []
        for o in options where required.contains(o.name) { words.append(o.synopsis) }
        words += arguments.map(\.synopsis)
        for o in options where !required.contains(o.name) { words.append("[\(o.synopsis)]") }
        var lines: [String] = []
        var line = "usage: " + head
        let indent = String(repeating: " ", count: "usage: ".count + head.count + 1)
        for word in words {
            if line.count + 1 + word.count > 100, line.count > indent.count {
                lines.append(line)
                line = indent + word
            } else {
                line += " " + word
            }
        }
        lines.append(line)
        for alternative in alternativeUsage { lines.append("       geomon \(alternative)") }
        return lines
    }

    /// The whole `--help` text.
    public var help: String {
        var text = usage.joined(separator: "\n") + "\n"
        if !discussion.isEmpty { text += "\n" + discussion + "\n" }
        if !arguments.isEmpty {
            text += "\narguments:\n" + Self.table(arguments.map { ($0.name, $0.help) })
        }
        if !options.isEmpty {
            text += "\noptions:\n" + Self.table(options.map { ($0.synopsis, $0.help + (required.contains($0.name) ? " (required)" : "")) })
        }
        return text
    }

    /// Two columns: the term, then its help wrapped at 100 columns (a long term gets its own line).
    static func table(_ rows: [(String, String)]) -> String {
        let width = min(24, (rows.map(\.0.count).max() ?? 0))
        var out = ""
        for (term, help) in rows {
            let pad = String(repeating: " ", count: 2 + width + 2)
            let wrapped = wrap(help, width: 100 - pad.count)
            if term.count > width {
                out += "  \(term)\n"
                for line in wrapped { out += pad + line + "\n" }
            } else {
                out += "  " + term + String(repeating: " ", count: width - term.count + 2)
                out += (wrapped.first ?? "") + "\n"
                for line in wrapped.dropFirst() { out += pad + line + "\n" }
            }
        }
        return out
    }

    /// Words wrapped into lines of at most `width` characters (a longer word stands alone).
    public static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ") {
                if line.isEmpty {
                    line = String(word)
                } else if line.count + 1 + word.count > width {
                    lines.append(line)
                    line = String(word)
                } else {
                    line += " " + word
                }
            }
            lines.append(line)
        }
        return lines
    }
}
