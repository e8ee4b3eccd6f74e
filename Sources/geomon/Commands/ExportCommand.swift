/// `geomon export`: Writes stored fixes and events as GPX, GeoJSON or JSON lines.
enum ExportCommand: Command {
    static let name = "export"
    static let summary = "Writes stored fixes and events as GPX, GeoJSON or JSON lines"
    static let help = """
    usage: geomon export [OPTIONS]

    Writes stored fixes and events as GPX, GeoJSON or JSON lines.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        writeStderr("geomon export: error: not implemented yet")
        return ExitCode.failure.code
    }
}
