/// `geomon query`: Reports which fences contain points and the nearest boundary.
enum QueryCommand: Command {
    static let name = "query"
    static let summary = "Reports which fences contain points and the nearest boundary"
    static let help = """
    usage: geomon query [OPTIONS]

    Reports which fences contain points and the nearest boundary.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        writeStderr("geomon query: error: not implemented yet")
        return ExitCode.failure.code
    }
}
