/// Batch queries: many points answered in spatial order, so that consecutive queries find the
/// cells, fence records and vertices they need still in the cache.
extension FenceStore {
    /// The order in which to answer `points`: indices sorted by the Morton (Z-order) code of
    /// the point's position on a 65,536 × 65,536 raster over the grid's extent (points outside
    /// it are clamped to its border, invalid points go last); ties keep input order.
    func spatialOrder(of points: UnsafeBufferPointer<Coordinate>) -> [UInt32] {
        let n = points.count
        guard n > 0 else { return [] }
        let width = cellLonDegrees * Double(columns), height = cellLatDegrees * Double(rows)
        let sx = width > 0 ? 65535 / width : 0, sy = height > 0 ? 65535 / height : 0
        // Key: 32-bit Morton code above the 32-bit point index; sorted by the code only (a
        // stable radix sort keeps equal codes in input order).
        var keys = [UInt64](repeating: 0, count: n)
        keys.withUnsafeMutableBufferPointer { out in
            for i in 0..<n {
                let p = points[i]
                var code = UInt64(UInt32.max)
                if p.latitude.isFinite, p.longitude.isFinite {
                    var lon = p.longitude
                    if lon < gridLon0 { lon += 360 } else if lon > gridLon0 + width { lon -= 360 }
                    let x = Self.quantize((lon - gridLon0) * sx)
                    let y = Self.quantize((p.latitude - gridLat0) * sy)
                    code = Self.spread16(x) | (Self.spread16(y) << 1)
                }
                out[i] = (code << 32) | UInt64(i)
            }
        }
        Self.radixSortHigh32(&keys)
        return keys.map { UInt32(truncatingIfNeeded: $0) }
    }

    @inline(__always)
    static func quantize(_ v: Double) -> UInt32 {
        v <= 0 ? 0 : (v >= 65535 ? 65535 : UInt32(v))
    }

    /// The low 16 bits of `v` spread to the even bits of the result.
    @inline(__always)
    static func spread16(_ v: UInt32) -> UInt64 {
        var x = UInt64(v) & 0xFFFF
        x = (x | (x << 8)) & 0x00FF_00FF
        x = (x | (x << 4)) & 0x0F0F_0F0F
        x = (x | (x << 2)) & 0x3333_3333
        x = (x | (x << 1)) & 0x5555_5555
        return x
    }

    /// Stable LSD radix sort of `keys` by their upper 32 bits (three 11-bit digits).
    static func radixSortHigh32(_ keys: inout [UInt64]) {
        let n = keys.count
        guard n > 1 else { return }
        var other = [UInt64](repeating: 0, count: n)
        var counts = [Int](repeating: 0, count: 2049)
        for pass in 0..<3 {
            let shift = UInt64(32 + 11 * pass)
            keys.withUnsafeBufferPointer { source in
                other.withUnsafeMutableBufferPointer { target in
                    counts.withUnsafeMutableBufferPointer { c in
                        for d in 0...2048 { c[d] = 0 }
                        for k in source { c[Int((k >> shift) & 0x7FF) + 1] += 1 }
                        for d in 0..<2048 { c[d + 1] += c[d] }
                        for k in source {
                            let d = Int((k >> shift) & 0x7FF)
                            target[c[d]] = k
                            c[d] += 1
                        }
                    }
                }
            }
            swap(&keys, &other)
        }
    }
}
