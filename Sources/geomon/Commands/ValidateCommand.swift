/// `geomon validate`: Checks profiles and prints compiler-style diagnostics.
enum ValidateCommand: Command {
    static let name = "validate"
    static let summary = "Checks profiles and prints compiler-style diagnostics"
    static let help = """
    usage: geomon validate [OPTIONS]

    Checks profiles and prints compiler-style diagnostics.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        writeStderr("geomon validate: error: not implemented yet")
        return ExitCode.failure.code
    }
}
