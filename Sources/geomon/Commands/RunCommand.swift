/// `geomon run`: Runs the monitor on a live receiver through gpsd.
enum RunCommand: Command {
    static let name = "run"
    static let summary = "Runs the monitor on a live receiver through gpsd"
    static let help = """
    usage: geomon run [OPTIONS]

    Runs the monitor on a live receiver through gpsd.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        writeStderr("geomon run: error: not implemented yet")
        return ExitCode.failure.code
    }
}
