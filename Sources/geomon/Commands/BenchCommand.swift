/// `geomon bench`: Benchmarks the fence index and generates test data.
enum BenchCommand: Command {
    static let name = "bench"
    static let summary = "Benchmarks the fence index and generates test data"
    static let help = """
    usage: geomon bench [OPTIONS]

    Benchmarks the fence index and generates test data.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        writeStderr("geomon bench: error: not implemented yet")
        return ExitCode.failure.code
    }
}
