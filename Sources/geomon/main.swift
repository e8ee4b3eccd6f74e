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

let exitCode = GeomonCLI.main(Array(CommandLine.arguments.dropFirst()), commands: commands)
exit(exitCode)
