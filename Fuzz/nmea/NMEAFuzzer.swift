// libFuzzer harness: NMEAParser fed the input whole and in random chunk splits.
// Invariants: valid fixes; the same fixes whatever the split (when no line is over-long, since
// over-long lines are dropped by length and the length seen depends on the split).
import GeomonCore
import GeomonSources

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNMEA(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)

    var whole = NMEAParser()
    var wholeFixes: [Fix] = []
    whole.feed(bytes, into: &wholeFixes)
    wholeFixes += whole.finish()
    checkFixes(wholeFixes, "nmea whole")
    checkSkipped(whole.skipped, "nmea whole")

    var split = NMEAParser()
    var splitFixes: [Fix] = []
    for chunk in randomChunks(bytes, maxChunk: 97) { splitFixes += split.feed(chunk) }
    splitFixes += split.finish()
    checkFixes(splitFixes, "nmea split")

    if longestLine(bytes, nulEndsLine: true) <= 512, splitFixes != wholeFixes {
        violation("nmea: \(wholeFixes.count) fixes whole, \(splitFixes.count) split")
    }

    // A live reader ending epochs early still yields only valid fixes.
    var live = NMEAParser()
    var liveFixes: [Fix] = []
    for chunk in randomChunks(bytes, maxChunk: 300) {
        liveFixes += live.feed(chunk)
        if chunk.count % 3 == 0 { liveFixes += live.endEpoch() }
    }
    liveFixes += live.finish()
    checkFixes(liveFixes, "nmea live")
    return 0
}
