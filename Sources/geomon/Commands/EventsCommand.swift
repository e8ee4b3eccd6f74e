/// `geomon events`: Lists stored events.
enum EventsCommand: Command {
    static let name = "events"
    static let summary = "Lists stored events"
    static let help = """
    usage: geomon events [OPTIONS]

    Lists stored events.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        writeStderr("geomon events: error: not implemented yet")
        return ExitCode.failure.code
    }
}
