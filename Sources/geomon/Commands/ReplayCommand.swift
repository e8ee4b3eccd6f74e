/// `geomon replay`: Runs the engine on recorded tracks with a virtual clock.
enum ReplayCommand: Command {
    static let name = "replay"
    static let summary = "Runs the engine on recorded tracks with a virtual clock"
    static let help = """
    usage: geomon replay [OPTIONS]

    Runs the engine on recorded tracks with a virtual clock.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        writeStderr("geomon replay: error: not implemented yet")
        return ExitCode.failure.code
    }
}
