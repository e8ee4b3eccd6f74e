// libFuzzer harness: TrackReader.read(bytes:name:), format detection then the detected reader.
import GeomonCore
import GeomonSources

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrack(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let track = try TrackReader.read(bytes: bytes, name: "fuzz")
        guard TrackFormat(rawValue: track.format) != nil else { violation("track: unknown format \(track.format)") }
        checkFixes(track.fixes, "track \(track.format)")
        checkSkipped(track.skipped, "track \(track.format)")
    } catch {
        // A clear error is a fine answer to bad input; it must say something.
        if error.message.isEmpty || error.isMissing { violation("track: bad error \(error)") }
    }
    return 0
}
