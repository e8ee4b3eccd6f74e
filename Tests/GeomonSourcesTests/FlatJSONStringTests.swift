@testable import GeomonSources
import Testing

/// Flat JSON lines (tracks, gpsd, coarse and motion plugins) read a string's escapes as the
/// other JSON readers do (`JSONStringText`): a surrogate pair is one character.
struct FlatJSONStringTests {
    @Test func surrogatePairsAndLoneSurrogatesReadAsElsewhere() throws {
        let object = try FlatJSON.parseObject(Array(#"{"a":"\ud83d\ude00 smile","b":"x\ud83d\u0041","c":"caf\u00e9","d":1}"#.utf8))
        #expect(object["a"]?.string == "😀 smile")
        #expect(object["b"]?.string == "x\u{FFFD}A")
        #expect(object["c"]?.string == "café")
        #expect(object["d"]?.double == 1)
        #expect(throws: FlatJSON.Failure.invalid("invalid escape in a string at byte 8")) { try FlatJSON.parseObject(Array(#"{"a":"b\q"}"#.utf8)) }
    }
}
