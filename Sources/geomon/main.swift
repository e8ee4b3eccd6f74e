#if canImport(Glibc)
import Glibc
#endif

/// Every subcommand, in the order `geomon --help` lists them.
let commands: [any Command.Type] = [
    ValidateCommand.self,
    QueryCommand.self,
    ReplayCommand.self,
    RunCommand.self,
    StatusCommand.self,
    EventsCommand.self,
    ExportCommand.self,
    HooksCommand.self,
    BenchCommand.self,
]

// First: may re-execute geomon with its heap on huge pages (a large fence set).
HeapPages.prepare(program: CommandLine.arguments.first ?? "geomon", arguments: Array(CommandLine.arguments.dropFirst()))
let exitCode = GeomonCLI.main(Array(CommandLine.arguments.dropFirst()), commands: commands)
exit(exitCode)
