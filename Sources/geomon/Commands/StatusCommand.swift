/// `geomon status`: Shows fence states, the last fix and pending deliveries.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "Shows fence states, the last fix and pending deliveries"
    static let help = """
    usage: geomon status [OPTIONS]

    Shows fence states, the last fix and pending deliveries.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        writeStderr("geomon status: error: not implemented yet")
        return ExitCode.failure.code
    }
}
