@testable import GeomonConfig
import GeomonFormat
import Testing

/// `JSONCursor.number` reads digits eight bytes at a time where enough bytes are left:
/// every number must parse to what `Double(String)` makes of its text, whatever its length,
/// wherever it ends (mid-word, at a word's end, with fewer than eight bytes left in the file).
struct JSONNumberTests {
    /// Numbers with 1–10 integer digits, 0–24 fraction digits, either sign and sometimes an
    /// exponent, from a fixed seed.
    static func numbers() -> [String] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var out: [String] = ["0", "-0", "0.5", "1e22", "9007199254740993", "0.1", "179.99999999", "-90.000000000000000001"]
        for _ in 0..<4000 {
            var text = next(4) == 0 ? "-" : ""
            let integerDigits = 1 + next(10)
            for d in 0..<integerDigits { text += String(d == 0 && integerDigits > 1 ? 1 + next(9) : next(10)) }
            let fractionDigits = next(25)
            if fractionDigits > 0 {
                text += "."
                for _ in 0..<fractionDigits { text += String(next(10)) }
            }
            if next(8) == 0 { text += "e" + (next(2) == 0 ? "-" : "") + String(next(30)) }
            out.append(text)
        }
        return out
    }

    @Test func everyNumberParsesAsDoubleDoes() throws {
        for text in Self.numbers() {
            let expected = try #require(Double(text))
            // Alone (the file ends right after it) and inside an array (bytes follow).
            let alone = try JSONTree.parse(Array(text.utf8)).number
            #expect(alone?.bitPattern == expected.bitPattern, "\(text)")
            let inArray = try JSONTree.parse(Array("[\(text),\(text)]   ".utf8)).array?.map { $0.number?.bitPattern }
            #expect(inArray == [expected.bitPattern, expected.bitPattern], "\(text)")
        }
    }

    @Test func aFractionWithoutDigitsIsAnError() {
        for text in ["1.", "[1.]", "-.5", "[-]", "1.e5", "[0.,1]", "12345678."] {
            #expect(throws: JSONSyntaxError.self, "\(text)") { try JSONTree.parse(Array(text.utf8)) }
        }
    }
}
