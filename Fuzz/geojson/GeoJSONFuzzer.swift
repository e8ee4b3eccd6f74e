// libFuzzer harness: the byte-level GeoJSON fence reader, with and without polygon checks.
import GeomonConfig
import GeomonCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGeoJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let checked = GeoJSONFences.parse(bytes, file: "fuzz.geojson", idProperty: nil, checkPolygons: true)
    checkDiagnostics(checked.diagnostics.map { ($0.message, $0.location) }, "geojson")
    for fence in checked.fences { checkFence(fence, "geojson") }

    let unchecked = GeoJSONFences.parse(bytes, file: "fuzz.geojson", idProperty: nil, checkPolygons: false)
    checkDiagnostics(unchecked.diagnostics.map { ($0.message, $0.location) }, "geojson unchecked")
    for fence in unchecked.fences { checkFence(fence, "geojson unchecked") }
    // Skipping the polygon rules can only let more fences through, never fewer.
    if unchecked.fences.count < checked.fences.count {
        violation("geojson: \(checked.fences.count) fences checked, \(unchecked.fences.count) unchecked")
    }
    return 0
}
