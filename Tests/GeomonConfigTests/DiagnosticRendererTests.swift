import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// Diagnostics as `geomon validate` prints them: text with the source line and a caret, JSON.
struct DiagnosticRendererTests {
    static let lineBreaks = ["\n", "\r\n", "\r"]

    @Test(arguments: lineBreaks)
    func theSourceLineAndCaretAreShownWhateverTheLineBreaks(_ lineBreak: String) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let lines = ["version: 1", "name: t", "fences:", "  - {id: a, circle: {lat: 46.3, lon: 6.9, radius: -3m}}"]
        let path = try dir.write("p.yaml", lines.joined(separator: lineBreak) + lineBreak)
        let diagnostic = Diagnostic.error("'radius' must be greater than 0 m (got -3m)", at: SourceLocation(file: path, line: 4, column: 50))
        let text = DiagnosticRenderer.text([diagnostic])
        #expect(text == "\(diagnostic.description)\n\(lines[3])\n\(String(repeating: " ", count: 49))^\n")
    }

    @Test func aFileThatCannotBeReadIsNamedInJSON() {
        var diagnostic = Diagnostic.error("cannot read profile 'missing.yaml': No such file or directory", at: nil)
        diagnostic.file = "missing.yaml"
        let json = DiagnosticRenderer.json([diagnostic])
        #expect(json.contains(#""file":"missing.yaml","line":null,"column":null"#))
        #expect(diagnostic.description == "missing.yaml: error: cannot read profile 'missing.yaml': No such file or directory")
    }
}
