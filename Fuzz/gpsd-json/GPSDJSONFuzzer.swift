// libFuzzer harness: GPSDJSONParser (gpsd `?WATCH={"json":true}` reports), whole and split.
import GeomonCore
import GeomonSources

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGPSDJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)

    var whole = GPSDJSONParser()
    let wholeFixes = whole.feed(Array(bytes)) + whole.finish()
    checkFixes(wholeFixes, "gpsd-json whole")
    checkSkipped(whole.skipped, "gpsd-json whole")

    var split = GPSDJSONParser()
    var splitFixes: [Fix] = []
    for chunk in randomChunks(bytes, maxChunk: 200) { splitFixes += split.feed(chunk) }
    splitFixes += split.finish()
    checkFixes(splitFixes, "gpsd-json split")
    if longestLine(bytes, nulEndsLine: false) <= 65_536, splitFixes != wholeFixes {
        violation("gpsd-json: \(wholeFixes.count) fixes whole, \(splitFixes.count) split")
    }

    // The JSON lines reader shares the flat JSON scanner: same bytes, same rules.
    var lines = JSONLinesParser()
    checkFixes(lines.feed(Array(bytes)) + lines.finish(), "jsonl")
    return 0
}
