import GeomonCore

/// Fixes stored as chunks: one row per committed batch, the fixes packed as fixed-size
/// little-endian records (time ms Int64, lat, lon, accuracy, speed, course as Float64 with NaN
/// for "none", source as one byte, padded to 56 bytes). One INSERT per batch instead of one
/// per fix is what lets replay store every fix at hundreds of thousands of fixes per second.
enum FixChunk {
    static let recordSize = 56

    static func encode(_ fixes: some Collection<Fix>) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: fixes.count * recordSize)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            for fix in fixes {
                raw.storeBytes(of: fix.time.millisecondsSince1970.littleEndian, toByteOffset: offset, as: Int64.self)
                func store(_ value: Double, _ k: Int) {
                    raw.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: offset + 8 + k * 8, as: UInt64.self)
                }
                store(fix.coordinate.latitude, 0)
                store(fix.coordinate.longitude, 1)
                store(fix.horizontalAccuracyMeters, 2)
                store(fix.speedMetersPerSecond ?? .nan, 3)
                store(fix.courseDegrees ?? .nan, 4)
                raw.storeBytes(of: fix.source == .coarse ? 1 : 0, toByteOffset: offset + 48, as: UInt8.self)
                offset += recordSize
            }
        }
        return bytes
    }

    static func decode(_ raw: UnsafeRawBufferPointer) -> [Fix] {
        let count = raw.count / recordSize
        var fixes: [Fix] = []
        fixes.reserveCapacity(count)
        for i in 0..<count {
            let offset = i * recordSize
            func double(_ k: Int) -> Double {
                Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 8 + k * 8, as: UInt64.self)))
            }
            let time = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self))
            let speed = double(3), course = double(4)
            fixes.append(Fix(
                time: UTCTime(millisecondsSince1970: time),
                coordinate: Coordinate(latitude: double(0), longitude: double(1)),
                horizontalAccuracyMeters: double(2),
                speedMetersPerSecond: speed.isNaN ? nil : speed,
                courseDegrees: course.isNaN ? nil : course,
                source: raw[offset + 48] == 1 ? .coarse : .gnss))
        }
        return fixes
    }
}
