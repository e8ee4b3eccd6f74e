// libFuzzer harness: the readers of fence files other than GeoJSON (Home Assistant zones,
// OwnTracks waypoints, KML, KMZ, GPX waypoints, Traccar geofences), each on every input.
// Every place they keep must be a fence the index takes; every problem has a position.
import GeomonConfig
import GeomonCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlaces(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for format in PlaceFileFormat.allCases where format != .geojson {
        let read = PlaceFiles.read(bytes, file: "fuzz.\(format.rawValue)", format: format) { _ in bytes }
        checkDiagnostics(read.diagnostics.map { ($0.message, $0.location) }, format.rawValue)
        var builder = FenceIndex.Builder()
        var ids = Set<String>()
        for place in read.places {
            checkShape(place.shape, "\(format.rawValue): place '\(place.id)'")
            if !ids.insert(place.id).inserted { violation("\(format.rawValue): id '\(place.id)' twice") }
            builder.add(place.shape)
        }
        let index = builder.build()
        if index.count != read.places.count { violation("\(format.rawValue): \(read.places.count) places, \(index.count) indexed") }
    }
    _ = PlaceFiles.slug(String(decoding: bytes.prefix(256), as: UTF8.self))
    return 0
}
