import GeomonCore
import Testing

struct TextHelpersTests {
    @Test(arguments: [
        ("/var/lib/geomon/home.db", "/var/lib/geomon"), ("/home.db", "/"), ("home.db", ""),
        ("state/home.db", "state"), ("/a//b/", "/a"), ("/", "/"), ("", ""),
    ])
    func directoryPartIsWhatDirnameSays(path: String, directory: String) {
        #expect(directoryPart(of: path) == directory)
    }

    @Test func trimmingWhitespaceKeepsTheInside() {
        #expect(" Mains\n".trimmingWhitespace() == "Mains")
        #expect("\t1 2\r\n".trimmingWhitespace() == "1 2")
        #expect(" \n\t".trimmingWhitespace() == "")
        #expect("x".trimmingWhitespace() == "x")
    }
}
