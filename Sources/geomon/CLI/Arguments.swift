/// A usage error: bad argv. Printed as `geomon: error: …` plus the command's usage; exit 64.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Exit with a code after the command printed what it needed to.
struct ExitCode: Error {
    var code: Int32
    init(_ code: Int32) { self.code = code }
    static let success = ExitCode(0)
    static let failure = ExitCode(1)
    static let usage = ExitCode(64)
    static let dataError = ExitCode(65)
    static let noInput = ExitCode(66)
    static let unavailable = ExitCode(69)
}

/// A small argv reader: options (`--name value`, `--name=value`), flags, positionals.
/// Every option must be consumed; anything left over is a usage error.
struct Arguments {
    private var items: [String]
    private var consumed: [Bool]

    init(_ argv: [String]) {
        items = argv
        consumed = Array(repeating: false, count: argv.count)
    }

    /// True when `--help`/`-h` is present (anywhere before `--`).
    var wantsHelp: Bool {
        for item in items {
            if item == "--" { return false }
            if item == "--help" || item == "-h" { return true }
        }
        return false
    }

    /// Removes and returns a flag's presence.
    mutating func flag(_ name: String) -> Bool {
        var found = false
        for (i, item) in items.enumerated() where !consumed[i] {
            if item == "--" { break }
            if item == name {
                consumed[i] = true
                found = true
            }
        }
        return found
    }

    /// Removes and returns the last value given for an option (`--name v` or `--name=v`).
    mutating func option(_ name: String) throws -> String? {
        try options(name).last
    }

    /// All values given for a repeatable option, in order.
    mutating func options(_ name: String) throws -> [String] {
        var values: [String] = []
        var i = 0
        while i < items.count {
            defer { i += 1 }
            if consumed[i] { continue }
            let item = items[i]
            if item == "--" { break }
            if item == name {
                guard i + 1 < items.count, !consumed[i + 1] else {
                    throw UsageError("option '\(name)' needs a value")
                }
                consumed[i] = true
                consumed[i + 1] = true
                values.append(items[i + 1])
                i += 1
            } else if item.hasPrefix(name + "=") {
                consumed[i] = true
                values.append(String(item.dropFirst(name.count + 1)))
            }
        }
        return values
    }

    /// A numeric option with a range check.
    mutating func doubleOption(_ name: String, default value: Double? = nil, range: ClosedRange<Double>? = nil) throws -> Double? {
        guard let text = try option(name) else { return value }
        guard let number = Double(text), number.isFinite else {
            throw UsageError("option '\(name)' needs a number (got '\(text)')")
        }
        if let range, !range.contains(number) {
            throw UsageError("option '\(name)' must be in \(range.lowerBound)...\(range.upperBound) (got \(text))")
        }
        return number
    }

    mutating func intOption(_ name: String, default value: Int? = nil, range: ClosedRange<Int>? = nil) throws -> Int? {
        guard let text = try option(name) else { return value }
        guard let number = Int(text) else {
            throw UsageError("option '\(name)' needs an integer (got '\(text)')")
        }
        if let range, !range.contains(number) {
            throw UsageError("option '\(name)' must be in \(range.lowerBound)...\(range.upperBound) (got \(text))")
        }
        return number
    }

    /// A choice among fixed values.
    mutating func choice(_ name: String, _ allowed: [String], default value: String) throws -> String {
        guard let text = try option(name) else { return value }
        guard allowed.contains(text) else {
            throw UsageError("option '\(name)' must be one of \(allowed.joined(separator: ", ")) (got '\(text)')")
        }
        return text
    }

    /// Everything not consumed yet. Unknown options (`-x`, `--x`) are usage errors.
    mutating func positionals() throws -> [String] {
        var result: [String] = []
        var afterDashes = false
        for (i, item) in items.enumerated() where !consumed[i] {
            consumed[i] = true
            if !afterDashes && item == "--" {
                afterDashes = true
                continue
            }
            if !afterDashes && item.hasPrefix("-") && item.count > 1 && Double(item) == nil {
                throw UsageError("unknown option '\(item)'")
            }
            result.append(item)
        }
        return result
    }

    /// Fails when anything is left unconsumed.
    mutating func finish() throws {
        let rest = try positionals()
        if let first = rest.first {
            throw UsageError("unexpected argument '\(first)'")
        }
    }
}

/// One `geomon` subcommand.
protocol Command {
    /// The word after `geomon`.
    static var name: String { get }
    /// One line for `geomon --help`.
    static var summary: String { get }
    /// Full help text, starting with the usage line(s).
    static var help: String { get }
    /// Runs with the arguments after the command name; returns the exit code.
    static func run(_ arguments: inout Arguments) throws -> Int32
}
