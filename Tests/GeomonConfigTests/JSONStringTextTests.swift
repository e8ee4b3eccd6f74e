import GeomonCore
@testable import GeomonConfig
import GeomonFormat
import Testing

/// Every JSON reader geomon has reads a string's escapes the same way (`JSONStringText`):
/// the GeoJSON fence reader, the place files' tree, and (in GeomonSourcesTests) flat JSON lines.
struct JSONStringTextTests {
    /// (JSON string literal, its text): plain UTF-8, simple escapes, a BMP `\u`, a surrogate
    /// pair, a lone high surrogate before another escape, a lone low surrogate.
    static let cases: [(json: String, text: String)] = [
        (#""Zürich""#, "Zürich"),
        (#""a\"b\\c\/d\n\t""#, "a\"b\\c/d\n\t"),
        (#""caf\u00e9""#, "café"),
        (#""\ud83d\ude00 smile""#, "😀 smile"),
        (#""x\ud83d\u0041""#, "x\u{FFFD}A"),
        (#""\udc00!""#, "\u{FFFD}!"),
    ]

    @Test(arguments: cases)
    func theSharedReaderDecodesTheEscapes(_ json: String, _ text: String) throws {
        let bytes = Array(json.utf8)
        let read = try bytes.withUnsafeBufferPointer { try JSONStringText.read($0, quote: 0) }
        #expect(read.text == text)
        #expect(read.end == bytes.count)
    }

    @Test(arguments: cases)
    func aFenceNameAndAPlaceFileStringReadAlike(_ json: String, _ text: String) throws {
        let geojson = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"f","properties":{"name":"# + json
            + #"},"geometry":{"type":"Polygon","coordinates":[[[8.5,47.4],[8.6,47.4],[8.6,47.5],[8.5,47.5],[8.5,47.4]]]}}]}"#
        let read = GeoJSONFences.parse(Array(geojson.utf8), file: "f.geojson")
        #expect(read.fences.map(\.name) == [text], "\(read.diagnostics)")
        #expect(try JSONTree.parse(Array(#"{"desc":\#(json)}"#.utf8))["desc"]?.string == text)
    }

    @Test func badEscapesAreErrorsAtTheirByte() {
        for (json, offset) in [(#""ab\x""#, 3), (#""\u12g4""#, 1), ("\"a\u{1}\"", 2), (#""open"#, 0)] {
            let bytes = Array(json.utf8)
            #expect(throws: JSONStringText.Failure.self) { _ = try bytes.withUnsafeBufferPointer { try JSONStringText.read($0, quote: 0) } }
            let result = bytes.withUnsafeBufferPointer { buffer in Result { () throws(JSONStringText.Failure) in try JSONStringText.read(buffer, quote: 0) } }
            guard case let .failure(failure) = result else { continue }
            #expect(failure.offset == offset, "\(json): \(failure)")
        }
    }
}
