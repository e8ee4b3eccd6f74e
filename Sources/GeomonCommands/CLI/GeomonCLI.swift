#if canImport(Glibc)
import Glibc
#endif
import GeomonFormat

/// One `geomon` command: its declarations, a value parsed from argv, a check of the option
/// combination, and the work (swift-argument-parser's shape, without the package).
public protocol GeomonCommand: Sendable {
    /// Options, arguments and help, declared once: `--help`, the man page and bash completion
    /// are generated from it.
    static var spec: CommandSpec { get }
    /// Reads the parsed argv (types and ranges); throws `UsageError`.
    init(_ arguments: ParsedArguments) throws
    /// Checks the combination of options before anything runs; throws `UsageError`.
    func validate() throws
    /// Does the work; returns the exit code.
    func run() throws -> Int32
}

extension GeomonCommand {
    public func validate() throws {}
}

/// A command with subcommands (`geomon hooks fire`, `geomon bench fences`).
public struct CommandGroup: Sendable {
    public var name: String
    public var abstract: String
    public var discussion: String
    public var subcommands: [any GeomonCommand.Type]

    /// The subcommand words (`fire`, `list`, …).
    public var words: [String] { subcommands.map { String($0.spec.name.split(separator: " ").last ?? "") } }

    public var help: String {
        var text = "usage: geomon \(name) \(words.joined(separator: "|")) [OPTIONS]\n"
        if !discussion.isEmpty { text += "\n" + discussion + "\n" }
        text += "\nsubcommands:\n" + CommandSpec.table(subcommands.map { ($0.spec.name, $0.spec.abstract) })
        text += "\nRun 'geomon \(name) SUBCOMMAND --help' for a subcommand's options.\n"
        return text
    }
}

/// What `geomon` does with argv: dispatch, help, version, and the one mapping from errors to
/// exit codes and messages.
public enum GeomonCLI {
    /// The version: the one place it is written (`geomon --version`, the package).
    public static let version = "0.4.0"
    /// The release's date (the man page's).
    public static let releaseDate = "2026-12-01"

    /// Every command and group, in the order `geomon --help` lists them.
    public static let entries: [Entry] = [
        .command(ValidateCommand.self),
        .command(FencesCommand.self),
        .command(FencesHereCommand.self),
        .command(FencesRemoveCommand.self),
        .command(QueryCommand.self),
        .command(ReplayCommand.self),
        .command(RunCommand.self),
        .command(StatusCommand.self),
        .command(EventsCommand.self),
        .command(ExportCommand.self),
        .group(HooksCommand.group),
        .group(PublishCommand.group),
        .group(ReceiverCommand.group),
        .group(BenchCommand.group),
        .command(ManualCommand.self),
        .command(CompletionCommand.self),
    ]

    public enum Entry: Sendable {
        case command(any GeomonCommand.Type)
        case group(CommandGroup)

        public var name: String {
            switch self {
            case let .command(c): c.spec.name
            case let .group(g): g.name
            }
        }

        public var abstract: String {
            switch self {
            case let .command(c): c.spec.abstract
            case let .group(g): g.abstract
            }
        }
    }

    /// Every command's declarations (groups' subcommands included).
    public static var allSpecs: [CommandSpec] {
        entries.flatMap { entry -> [CommandSpec] in
            switch entry {
            case let .command(c): [c.spec]
            case let .group(g): g.subcommands.map { $0.spec }
            }
        }
    }

    /// What argv asks for, before anything runs.
    public enum Request {
        case help(String)
        case version
        case run(any GeomonCommand)
    }

    /// Parses argv (without the program name) into a request; throws `UsageError` (with the
    /// command it concerns, for the usage text).
    public static func parse(_ argv: [String]) throws -> Request {
        guard let first = argv.first else { throw ParseFailure(UsageError("missing command"), command: nil) }
        switch first {
        case "--help", "-h", "help":
            if argv.count > 1 {
                return .help(try helpText(for: Array(argv.dropFirst())))
            }
            return .help(topLevelHelp)
        case "--version", "version":
            return .version
        default:
            break
        }
        // Two-word commands (`fences here`) before the one-word one they extend.
        let pair = argv.count > 1 ? entries.first(where: { $0.name == "\(first) \(argv[1])" }) : nil
        guard let entry = pair ?? entries.first(where: { $0.name == first }) else {
            var message = "unknown command '\(first)'"
            if let near = EditDistance.suggestion(for: first, among: entries.map(\.name)) { message += "; did you mean '\(near)'?" }
            throw ParseFailure(UsageError(message), command: nil)
        }
        var rest = Array(argv.dropFirst(pair == nil ? 1 : 2))
        let type: any GeomonCommand.Type
        switch entry {
        case let .command(c):
            type = c
        case let .group(group):
            // The subcommand is the first word that is neither an option nor the value of one
            // (options may come first: `publish --db retry list` is no `publish retry`).
            guard let index = Self.subcommandIndex(in: rest, of: group) else {
                if rest.contains("--help") || rest.contains("-h") { return .help(group.help) }
                let expected = group.words.joined(separator: ", ")
                let message: String
                if let given = Self.firstWord(in: rest, of: group) {
                    message = "unknown subcommand '\(given)' (expected \(expected))"
                } else {
                    message = "missing subcommand (\(expected))"
                }
                throw ParseFailure(UsageError(message), group: group)
            }
            let word = rest.remove(at: index)
            type = group.subcommands[group.words.firstIndex(of: word) ?? 0]
        }
        do {
            let parsed = try ParsedArguments(rest, spec: type.spec)
            if parsed.wantsHelp { return .help(type.spec.help) }
            let command = try type.init(parsed)
            try command.validate()
            return .run(command)
        } catch let error as UsageError {
            throw ParseFailure(error, command: type.spec)
        }
    }

    /// A usage error with the command (or group) it concerns.
    public struct ParseFailure: Error, CustomStringConvertible {
        public var error: UsageError
        public var command: CommandSpec?
        public var group: CommandGroup?

        init(_ error: UsageError, command: CommandSpec?) {
            self.error = error
            self.command = command
        }

        init(_ error: UsageError, group: CommandGroup) {
            self.error = error
            self.group = group
        }

        public var description: String { error.message }
    }

    /// Runs argv; returns the exit code. Errors are printed here and nowhere else.
    public static func main(_ argv: [String]) -> Int32 {
        // A hook or pipe reader that goes away must not kill us with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        // Whoever started us may have left signals blocked (test runners, some supervisors);
        // a daemon must see SIGTERM, SIGINT and SIGHUP.
        var empty = sigset_t()
        sigemptyset(&empty)
        sigprocmask(SIG_SETMASK, &empty, nil)
        let request: Request
        do {
            request = try parse(argv)
        } catch let failure as ParseFailure {
            if let command = failure.command {
                writeStderr("geomon \(command.name): error: \(failure.error.message)\n\n" + command.usage.joined(separator: "\n")
                            + "\nSee 'geomon \(command.name) --help'.")
            } else if let group = failure.group {
                writeStderr("geomon \(group.name): error: \(failure.error.message)\n\n" + group.help)
            } else {
                writeStderr("geomon: error: \(failure.error.message)\n\n" + topLevelHelp)
            }
            return ExitCode.usage.code
        } catch let failure as CommandFailure {
            // A check before anything runs that is no misuse (an output that cannot be written).
            writeStderr("geomon: error: \(failure.message)")
            return failure.exitCode.code
        } catch {
            writeStderr("geomon: error: \(error)")
            return ExitCode.usage.code
        }
        switch request {
        case let .help(text):
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
            return 0
        case .version:
            print("geomon \(version)")
            return 0
        case let .run(command):
            return execute(command)
        }
    }

    /// Runs a parsed command and maps what it throws to messages and exit codes.
    public static func execute(_ command: any GeomonCommand) -> Int32 {
        do {
            return try command.run()
        } catch let exit as ExitCode {
            return exit.code
        } catch let failure as CommandFailure {
            writeStderr("geomon: error: \(failure.message)")
            return failure.exitCode.code
        } catch let usage as UsageError {
            let spec = type(of: command).spec
            writeStderr("geomon \(spec.name): error: \(usage.message)\n\n" + spec.usage.joined(separator: "\n") + "\nSee 'geomon \(spec.name) --help'.")
            return ExitCode.usage.code
        } catch {
            writeStderr("geomon: error: \(error)")
            return ExitCode.failure.code
        }
    }

    /// Where the first word of `arguments` that is neither an option nor an option's value
    /// (any of the group's subcommands' options that take one) is, when it names a subcommand.
    static func subcommandIndex(in arguments: [String], of group: CommandGroup) -> Int? {
        guard let i = firstWordIndex(in: arguments, of: group), group.words.contains(arguments[i]) else { return nil }
        return i
    }

    static func firstWord(in arguments: [String], of group: CommandGroup) -> String? {
        firstWordIndex(in: arguments, of: group).map { arguments[$0] }
    }

    private static func firstWordIndex(in arguments: [String], of group: CommandGroup) -> Int? {
        let valued = Set(group.subcommands.flatMap { $0.spec.options.filter { !$0.isFlag }.map(\.name) })
        var i = 0
        while i < arguments.count {
            let word = arguments[i]
            if !word.hasPrefix("-") || word == "-" { return i }
            if valued.contains(word) { i += 1 }
            i += 1
        }
        return nil
    }

    static func helpText(for words: [String]) throws -> String {
        // Two-word commands (`fences here`) first, as `parse` finds them.
        let pair = words.count > 1 ? entries.first(where: { $0.name == "\(words[0]) \(words[1])" }) : nil
        guard let entry = pair ?? entries.first(where: { $0.name == words[0] }) else {
            throw ParseFailure(UsageError("unknown command '\(words[0])'"), command: nil)
        }
        switch entry {
        case let .command(c):
            // `help fences here` matched the pair; a word more than the command has is not one.
            if words.count > (pair == nil ? 1 : 2) {
                throw ParseFailure(UsageError("unknown command '\(words.joined(separator: " "))'"), command: nil)
            }
            return c.spec.help
        case let .group(g):
            if words.count > 1, let i = g.words.firstIndex(of: words[1]) { return g.subcommands[i].spec.help }
            if words.count > 1 { throw ParseFailure(UsageError("unknown command '\(g.name) \(words[1])'"), group: g) }
            return g.help
        }
    }

    public static var topLevelHelp: String {
        let rows = entries.map { ($0.name, $0.abstract) }
        return """
        geomon \(version) — low-power geofence and significant-change monitor

        usage: geomon COMMAND [OPTIONS]

        commands:
        \(CommandSpec.table(rows))
        Run 'geomon COMMAND --help' for a command's options, 'man geomon' for all of them
        (from a source build: 'geomon manual | man -l -').
        Exit codes: 0 ok, 1 runtime failure, 64 usage, 65 invalid data, 66 missing input, 69 service unavailable.
        """
    }
}

/// Writes a line (newline added when missing) to standard error, unbuffered.
public func writeStderr(_ text: String) {
    var line = text
    if !line.hasSuffix("\n") { line += "\n" }
    var bytes = Array(line.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        bytes = bytes.dropFirst(written)
    }
}
