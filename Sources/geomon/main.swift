#if canImport(Glibc)
import Glibc
#endif
import GeomonCommands

// First: may re-execute geomon with its heap on huge pages (a large fence set).
HeapPages.prepare(program: CommandLine.arguments.first ?? "geomon", arguments: Array(CommandLine.arguments.dropFirst()))
exit(GeomonCLI.main(Array(CommandLine.arguments.dropFirst())))
