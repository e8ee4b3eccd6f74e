import GeomonTestSupport
import Testing

struct HelpTests {
    @Test func topLevelHelpListsCommandsAndExitsZero() throws {
        let result = try runGeomon(["--help"])
        #expect(result.exitCode == 0)
        #expect(result.stdout.contains("validate"))
        #expect(result.stdout.contains("replay"))
    }

    @Test func unknownCommandIsAUsageError() throws {
        let result = try runGeomon(["frobnicate"])
        #expect(result.exitCode == 64)
        #expect(result.stderr.contains("geomon: error: unknown command 'frobnicate'"))
    }

    @Test func noArgumentsIsAUsageError() throws {
        let result = try runGeomon([])
        #expect(result.exitCode == 64)
    }
}
