// libFuzzer harness: GPXParser on a whole document.
import GeomonCore
import GeomonSources

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGPX(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let (fixes, skipped) = GPXParser.parse(UnsafeBufferPointer(start: data, count: size))
    checkFixes(fixes, "gpx")
    checkSkipped(skipped, "gpx")
    return 0
}
