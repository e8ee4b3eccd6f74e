// libFuzzer harness: the byte-level GeoJSON fence reader, with and without polygon checks,
// strict, with corridor widths and circle radii, and streamed into the index.
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

    // Strict: ring defects become errors, so never more fences than without.
    let strict = GeoJSONFences.read(bytes, file: "fuzz.geojson", options: .init(strict: true))
    checkDiagnostics(strict.diagnostics.map { ($0.message, $0.location) }, "geojson strict")
    if strict.fences.count > checked.fences.count {
        violation("geojson: \(strict.fences.count) fences strict, \(checked.fences.count) lenient")
    }

    // Lines and points become fences with a width and a radius (from a property when the
    // feature has it), streamed into the index: every shape indexes and comes back.
    var options = GeoJSONFences.Options()
    options.width = 50
    options.widthProperty = "w"
    options.radius = 100
    options.radiusProperty = "r"
    var builder = FenceIndex.Builder(geoJSONBytes: bytes.count)
    var shapes: [FenceShape] = []
    let streamed = GeoJSONFences.read(bytes, file: "fuzz.geojson", options: options) { fence, shape in
        if fence.shape != nil { violation("geojson streamed: fence '\(fence.id)' carries its shape") }
        checkShape(shape, "geojson streamed: fence '\(fence.id)'")
        builder.add(shape)
        shapes.append(shape)
    }
    checkDiagnostics(streamed.diagnostics.map { ($0.message, $0.location) }, "geojson streamed")
    if streamed.fenceCount != shapes.count || streamed.fenceCount < checked.fences.count {
        violation("geojson streamed: \(streamed.fenceCount) fences counted, \(shapes.count) handed over, \(checked.fences.count) without sizes")
    }
    let index = builder.build()
    for k in shapes.indices {
        let back = index.shape(of: k)
        if back.kind != shapes[k].kind { violation("geojson streamed: fence \(k) \(shapes[k].kind) came back as \(back.kind)") }
        if let p = anyPoint(shapes[k]) {
            let d = index.signedDistance(fence: k, to: p)
            if d.isNaN { violation("geojson streamed: fence \(k) distance NaN at its own vertex") }
        }
    }
    return 0
}

private func anyPoint(_ shape: FenceShape) -> Coordinate? {
    switch shape {
    case let .circle(center, _): center
    case let .polygons(members): members.first?.shell.first
    case let .corridor(lines, _): lines.first?.first
    }
}
