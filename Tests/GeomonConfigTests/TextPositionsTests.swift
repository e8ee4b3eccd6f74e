@testable import GeomonConfig
import GeomonCore
import Testing

/// `file:line:column` of byte offsets, asked in any order (the readers ask in ascending order,
/// which is answered in one pass over a file on one line).
struct TextPositionsTests {
    @Test func columnsAreTheSameInAnyOrderOfAsking() {
        let text = "\u{FEFF}[{\"name\":\"Café\",\"x\":1},\n{\"name\":\"Zürich – Hbf\",\"y\":2}]\r\n{\"z\":3}"
        let bytes = Array(text.utf8)
        let reference = TextPositions(file: "f.json", bytes: bytes)
        let expected = bytes.indices.map { offset in
            // A fresh instance per offset: no earlier answer to count on from.
            TextPositions(file: "f.json", bytes: bytes).location(offset)
        }
        // Ascending (the readers' order), then descending and shuffled on one instance.
        #expect(bytes.indices.map { reference.location($0) } == expected)
        #expect(bytes.indices.reversed().map { reference.location($0) } == expected.reversed())
        var generator = SystemRandomNumberGenerator()
        for offset in bytes.indices.shuffled(using: &generator) {
            #expect(reference.location(offset) == expected[offset])
        }
        // The BOM does not count; a scalar of several bytes is one column.
        #expect(expected[3] == SourceLocation(file: "f.json", line: 1, column: 1))
        let afterCafe = Array("\u{FEFF}[{\"name\":\"Café".utf8).count
        #expect(expected[afterCafe].column == 15)
    }
}
