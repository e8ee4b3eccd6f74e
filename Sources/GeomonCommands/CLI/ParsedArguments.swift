public import GeomonCore
import GeomonFormat

/// A usage error: bad argv. Printed as `geomon CMD: error: …` plus the usage; exit 64.
public struct UsageError: Error, CustomStringConvertible, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Exit with a code after the command printed what it needed to.
public struct ExitCode: Error, Equatable, Sendable {
    public var code: Int32
    public init(_ code: Int32) { self.code = code }
    public static let success = ExitCode(0)
    public static let failure = ExitCode(1)
    public static let usage = ExitCode(64)
    public static let dataError = ExitCode(65)
    public static let noInput = ExitCode(66)
    public static let unavailable = ExitCode(69)
}

/// A failure with a message for `geomon: error: …` and the exit code to use.
public struct CommandFailure: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var exitCode: ExitCode
    public init(_ message: String, exitCode: ExitCode = .failure) {
        self.message = message
        self.exitCode = exitCode
    }
    public var description: String { message }
}

/// argv parsed against a command's declared options.
///
/// The parser checks what the declarations say (unknown options with the nearest valid one,
/// missing values, choices); the accessors check types and ranges. Asking for an option the
/// command did not declare is a programmer error.
public struct ParsedArguments: Sendable {
    public let spec: CommandSpec
    private var values: [String: [String]] = [:]
    public private(set) var positionals: [String] = []
    /// `--help` or `-h` was given.
    public private(set) var wantsHelp = false

    /// Parses `argv` (the words after the command's name).
    public init(_ argv: [String], spec: CommandSpec) throws(UsageError) {
        self.spec = spec
        var i = 0
        var afterDashes = false
        while i < argv.count {
            let word = argv[i]
            i += 1
            if afterDashes { positionals.append(word); continue }
            if word == "--" { afterDashes = true; continue }
            if word == "--help" || word == "-h" { wantsHelp = true; continue }
            guard word.hasPrefix("-"), word.count > 1, Double(word) == nil else {
                positionals.append(word)
                continue
            }
            var name = word
            var inline: String?
            if let eq = word.firstIndex(of: "="), word.hasPrefix("--") {
                name = String(word[..<eq])
                inline = String(word[word.index(after: eq)...])
            }
            guard let option = spec.option(named: name) else {
                var message = "unknown option '\(name)'"
                if let near = EditDistance.suggestion(for: name, among: spec.options.map(\.name)) {
                    message += "; did you mean '\(near)'?"
                }
                throw UsageError(message)
            }
            if option.isFlag {
                if inline != nil { throw UsageError("option '\(name)' takes no value") }
                values[name, default: []].append("")
                continue
            }
            if values[name] != nil, !option.repeatable { throw UsageError("option '\(name)' given twice") }
            let value: String
            if let inline {
                value = inline
            } else {
                guard i < argv.count else { throw UsageError("option '\(name)' needs a value (\(option.value ?? "VALUE"))") }
                value = argv[i]
                // The next word is one of the command's options: the value is missing.
                let next = value.firstIndex(of: "=").map { String(value[..<$0]) } ?? value
                if next.hasPrefix("--"), spec.option(named: next) != nil || next == "--help" {
                    throw UsageError("option '\(name)' needs a value (\(option.value ?? "VALUE")), not the option '\(next)'")
                }
                i += 1
            }
            // An empty value (`--db ""`, an unset shell variable) names nothing.
            if value.isEmpty { throw UsageError("option '\(name)' needs a value (\(option.value ?? "VALUE")), not an empty one") }
            if !option.choices.isEmpty, !option.choices.contains(value) {
                throw UsageError("option '\(name)' must be one of \(option.choices.joined(separator: ", ")) (got '\(value)')")
            }
            values[name, default: []].append(value)
        }
        if wantsHelp { return }
        try checkArity()
    }

    private func checkArity() throws(UsageError) {
        let arguments = spec.arguments
        let minimum = arguments.filter { $0.arity == .one || $0.arity == .many }.count
        let unbounded = arguments.contains { $0.arity == .many || $0.arity == .any }
        let maximum = unbounded ? Int.max : arguments.count
        if positionals.count < minimum {
            let missing = arguments.filter { $0.arity == .one || $0.arity == .many }[positionals.count...].first
            throw UsageError("missing \(missing?.name ?? "argument")")
        }
        if positionals.count > maximum {
            throw UsageError("unexpected argument '\(positionals[maximum])'")
        }
    }

    private func declared(_ name: String) -> OptionSpec {
        guard let option = spec.option(named: name) else {
            preconditionFailure("geomon \(spec.name) reads '\(name)', which it does not declare")
        }
        return option
    }

    /// Whether a flag was given.
    public func flag(_ name: String) -> Bool {
        precondition(declared(name).isFlag, "'\(name)' is not a flag")
        return values[name] != nil
    }

    /// Whether an option was given at all.
    public func has(_ name: String) -> Bool {
        _ = declared(name)
        return values[name] != nil
    }

    /// The last value given for an option.
    public func value(_ name: String) -> String? {
        precondition(!declared(name).isFlag, "'\(name)' is a flag")
        return values[name]?.last
    }

    /// Every value given for a repeatable option, in order.
    public func values(_ name: String) -> [String] {
        _ = declared(name)
        return values[name] ?? []
    }

    /// A value that must be given.
    public func required(_ name: String) throws(UsageError) -> String {
        guard let value = value(name) else { throw UsageError("missing '\(declared(name).synopsis)'") }
        return value
    }

    /// A finite number, optionally within `range`.
    public func double(_ name: String, in range: ClosedRange<Double>? = nil) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite else {
            throw UsageError("option '\(name)' needs a number (got '\(text)')")
        }
        if let range, !range.contains(number) {
            throw UsageError("option '\(name)' must be in \(NumberText.shortest(range.lowerBound))...\(NumberText.shortest(range.upperBound)) (got \(text))")
        }
        return number
    }

    /// An integer, optionally within `range`.
    public func int(_ name: String, in range: ClosedRange<Int>? = nil) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else { throw UsageError("option '\(name)' needs an integer (got '\(text)')") }
        if let range, !range.contains(number) {
            throw UsageError("option '\(name)' must be in \(range.lowerBound)...\(range.upperBound) (got \(text))")
        }
        return number
    }

    /// A choice, or `fallback` when absent (the parser already checked the value).
    public func choice(_ name: String, default fallback: String) -> String {
        value(name) ?? fallback
    }

    /// A time: RFC 3339 (`2029-11-25T08:00:00Z`), a date (`2029-11-25`, midnight UTC), or a time
    /// before `now` (`90s`, `30m`, `2h`, `1d`).
    public func time(_ name: String, now: UTCTime) throws(UsageError) -> UTCTime? {
        guard let text = value(name) else { return nil }
        if let time = UTCTime(rfc3339: text) { return time }
        if let time = UTCTime(rfc3339: text + "T00:00:00Z") { return time }
        if let ago = Self.relative(text) {
            // 10,000 years: beyond is no time a store holds, and the arithmetic would overflow.
            guard ago <= .seconds(10_000 * 31_557_600) else { throw UsageError("option '\(name)' goes back too far (got '\(text)')") }
            return now - ago
        }
        throw UsageError("option '\(name)' needs a time: RFC 3339 (2029-11-25T08:00:00Z), a date (2029-11-25) or a time ago (90s, 30m, 2h, 1d) (got '\(text)')")
    }

    /// `90s`, `30m`, `2h`, `1d`, `1w`.
    static func relative(_ text: String) -> Duration? {
        guard let unit = text.last, let count = Int64(text.dropLast()), count >= 0 else { return nil }
        let scale: Int64
        switch unit {
        case "s": scale = 1
        case "m": scale = 60
        case "h": scale = 3600
        case "d": scale = 86_400
        case "w": scale = 604_800
        default: return nil
        }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: scale)
        return .seconds(overflow ? Int64.max : seconds)
    }
}
