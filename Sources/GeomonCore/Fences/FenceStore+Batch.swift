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

    /// Loads, for a group of upcoming points, what their queries will read first (the cell
    /// ranges and cell entries of the 3 × 3 cells around each point, the records of the
    /// fences listed in the point's cell, and those polygons' headers, angles and vertices),
    /// stage by stage over the whole group.
    /// The loads of one stage are independent of each other, so the processor overlaps their
    /// cache misses, where a query alone would wait for each in turn (Swift has no prefetch
    /// instruction; these are plain loads). Returns a value derived from everything loaded,
    /// so the loads are not optimised away.
    func warm(_ points: UnsafeBufferPointer<Coordinate>, _ range: Range<Int>, cells: UnsafeMutableBufferPointer<Int32>,
              fenceList: UnsafeMutableBufferPointer<UInt32>) -> UInt32 {
        var sink: UInt32 = 0
        let width = cellLonDegrees * Double(columns)
        fences.withUnsafeBufferPointer { records in
            cellStarts.withUnsafeBufferPointer { starts in
                cellFences.withUnsafeBufferPointer { members in
                    // Stage 1: the points' cells and the ranges of the 3 × 3 cells around.
                    var g = 0
                    for j in range {
                        let p = points[j]
                        var lon = p.longitude
                        if lon < gridLon0 { lon += 360 } else if lon > gridLon0 + width { lon -= 360 }
                        let fx = (lon - gridLon0) / cellLonDegrees, fy = (p.latitude - gridLat0) / cellLatDegrees
                        // Also false for NaN.
                        if fx >= 0, fx < Double(columns), fy >= 0, fy < Double(rows) {
                            let ci = Int(fx), cj = Int(fy)
                            let cell = cj * columns + ci
                            cells[g] = Int32(truncatingIfNeeded: cell)
                            let i0 = max(0, ci - 1), i1 = min(columns, ci + 2)
                            for row in max(0, cj - 1)..<min(rows, cj + 2) {
                                sink ^= starts[row * columns + i0] ^ starts[row * columns + i1]
                            }
                        } else {
                            cells[g] = -1
                        }
                        g += 1
                    }
                    // Stage 2: the cell entries of those cells (one load per cache line); the
                    // fences listed in the point's own cell.
                    var listed = 0
                    g = 0
                    for _ in range {
                        let c = Int(cells[g])
                        g += 1
                        if c < 0 { continue }
                        let ci = c % columns, cj = c / columns
                        let i0 = max(0, ci - 1), i1 = min(columns, ci + 2)
                        for row in max(0, cj - 1)..<min(rows, cj + 2) where row != cj {
                            var e = Int(starts[row * columns + i0])
                            let end = Int(starts[row * columns + i1])
                            while e < end {
                                sink ^= members[e].fence
                                e += 3
                            }
                        }
                        for e in Int(starts[cj * columns + i0])..<Int(starts[cj * columns + i1]) {
                            let entry = members[e]
                            if e >= Int(starts[c]) && e < Int(starts[c + 1]) && listed < fenceList.count {
                                fenceList[listed] = entry.fence
                                listed += 1
                            } else {
                                sink ^= entry.fence
                            }
                        }
                    }
                    // Stage 3: their records.
                    var polygonsListed = 0
                    for i in 0..<listed {
                        let record = records[Int(fenceList[i])]
                        sink ^= record.external
                        if record.polygon != UInt32.max {
                            fenceList[polygonsListed] = record.polygon
                            polygonsListed += 1
                        }
                    }
                    // Stage 4: the polygons' headers, and (the loads only depend on the
                    // header) every cache line of the angles and vertices of small polygons
                    // (up to 160 vertices).
                    polygons.withUnsafeBufferPointer { headers in
                        vertices.withUnsafeBufferPointer { v in
                            angles.withUnsafeBufferPointer { a in
                                for i in 0..<polygonsListed {
                                    let h = headers[Int(fenceList[i])]
                                    sink ^= h.vertexStart
                                    let n = Int(h.vertexEnd) - Int(h.vertexStart)
                                    if n > 160 { continue }
                                    var o = 2 * Int(h.vertexStart)
                                    let end = 2 * Int(h.vertexEnd)
                                    while o < end {
                                        sink ^= v[o].bitPattern
                                        o += 16
                                    }
                                    if h.stripCount == UInt32.max {
                                        o = Int(h.stripStart)
                                        let angleEnd = o + n - 1
                                        while o < angleEnd {
                                            sink ^= a[o].bitPattern
                                            o += 16
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return sink
    }
}
