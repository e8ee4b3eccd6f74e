/// `geomon hooks`: Fires, lists, retries and inspects hook deliveries.
enum HooksCommand: Command {
    static let name = "hooks"
    static let summary = "Fires, lists, retries and inspects hook deliveries"
    static let help = """
    usage: geomon hooks [OPTIONS]

    Fires, lists, retries and inspects hook deliveries.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        writeStderr("geomon hooks: error: not implemented yet")
        return ExitCode.failure.code
    }
}
