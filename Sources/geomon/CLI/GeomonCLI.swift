#if canImport(Glibc)
import Glibc
#endif

/// Top-level dispatch: `geomon COMMAND [ARGS…]`, help, version, error printing, exit codes.
enum GeomonCLI {
    static let version = "0.1.0"

    static func main(_ argv: [String], commands: [any Command.Type]) -> Int32 {
        // A hook or pipe reader that goes away must not kill us with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        // Whoever started us may have left signals blocked (test runners, some supervisors);
        // a daemon must see SIGTERM, SIGINT and SIGHUP.
        var empty = sigset_t()
        sigemptyset(&empty)
        sigprocmask(SIG_SETMASK, &empty, nil)
        guard let first = argv.first else {
            writeStderr(topLevelHelp(commands))
            return ExitCode.usage.code
        }
        switch first {
        case "--help", "-h", "help":
            if argv.count > 1, let command = commands.first(where: { $0.name == argv[1] }) {
                print(command.help)
            } else {
                print(topLevelHelp(commands))
            }
            return 0
        case "--version", "version":
            print("geomon \(version)")
            return 0
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            writeStderr("geomon: error: unknown command '\(first)'\n\n" + topLevelHelp(commands))
            return ExitCode.usage.code
        }
        var arguments = Arguments(Array(argv.dropFirst()))
        if arguments.wantsHelp {
            print(command.help)
            return 0
        }
        do {
            return try command.run(&arguments)
        } catch let error as UsageError {
            writeStderr("geomon \(command.name): error: \(error.message)\n\n\(command.help)")
            return ExitCode.usage.code
        } catch let exit as ExitCode {
            return exit.code
        } catch {
            writeStderr("geomon: error: \(error)")
            return ExitCode.failure.code
        }
    }

    static func topLevelHelp(_ commands: [any Command.Type]) -> String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let lines = commands.map { "  \($0.name)\(String(repeating: " ", count: width - $0.name.count + 2))\($0.summary)" }
        return """
        geomon \(version) — low-power geofence and significant-change monitor

        usage: geomon COMMAND [OPTIONS]

        commands:
        \(lines.joined(separator: "\n"))

        Run 'geomon COMMAND --help' for a command's options.
        Exit codes: 0 ok, 1 runtime failure, 64 usage, 65 invalid data, 66 missing input, 69 service unavailable.
        """
    }
}

/// Writes a line (newline added when missing) to standard error, unbuffered.
func writeStderr(_ text: String) {
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
