internal import CMemoryHints

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

    /// Points between the stages of the batch query's prefetch pipeline.
    static let prefetchDistance = 2
    /// Stages of the pipeline (cell ranges, cell entries, records, polygon headers, polygon
    /// data).
    static let prefetchStages = 5
    /// Ring slots for the points in the pipeline (more than `prefetchStages × prefetchDistance`).
    static let prefetchRing = 16
    /// Fences remembered per point between stages.
    static let prefetchList = 16

    /// Prefetches the cache lines of the element at `element` (its first and last byte: a
    /// record may straddle two lines).
    @inline(__always)
    static func prefetchWhole<T>(_ element: UnsafePointer<T>) {
        let start = UnsafeRawPointer(element)
        geomon_prefetch(start)
        geomon_prefetch(start + (MemoryLayout<T>.stride - 1))
    }

    /// Answers every point of `points` (already in spatial order) as `query` does, calling
    /// `body(j, result)` for point `j`, with a software pipeline of prefetches: before point
    /// `j` is answered, stage `s` runs for point `j + (prefetchStages − s) × prefetchDistance`:
    /// 0, the point's cell and the prefetch of its cell range; 1, the prefetch of its cell
    /// entries; 2, the prefetch of the records of the fences listed there; 3, the prefetch of
    /// the headers of those polygons the query will likely scan; 4, the prefetch of their
    /// vertices (up to 160). Each stage reads only what an earlier stage prefetched, and a
    /// prefetch does not wait for its line, so the misses of several points are in flight
    /// while one is answered. Results are those of `query` point by point (prefetches change
    /// no value).
    ///
    /// The stages are straight-line calls, not a loop over a `switch` (an indirect branch per
    /// stage), and only the point's own cell is prefetched, not the 3 × 3 around it (the
    /// query leaves its cell for 0.16 rings per point in the benchmark mix): together 4 %
    /// faster in a paired run of both versions in one process, 40 rounds, cold caches.
    func queryPipelined(_ points: UnsafeBufferPointer<Coordinate>, within searchRadiusMeters: Double,
                        body: (_ j: Int, _ result: FenceQueryResult) -> Void) {
        let n = points.count
        let d = Self.prefetchDistance, stages = Self.prefetchStages
        let ring = Self.prefetchRing, listCapacity = Self.prefetchList
        let width = cellLonDegrees * Double(columns)
        // The metric at the grid's middle latitude: stage 3 only ranks candidates for
        // prefetching, so an approximate metre is good enough (and saves a cosine per point).
        let k = Geodesy.metersPerDegree(atLatitude: max(-85, min(85, gridLat0 + cellLatDegrees * Double(rows) / 2)))
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: ring) { cells in
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: ring) { counts in
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: ring * listCapacity) { lists in
        fences.withUnsafeBufferPointer { records in
        cellStarts.withUnsafeBufferPointer { starts in
        cellFences.withUnsafeBufferPointer { members in
        polygons.withUnsafeBufferPointer { headers in
        vertices.withUnsafeBufferPointer { v in
            // Local to this closure (not captured): passing it to `body` then needs no copy
            // (a retain and release of `containing` per point, each a full memory barrier).
            var result = FenceQueryResult()
            @inline(__always) func stage0(_ t: Int) {
                guard t >= 0, t < n else { return }
                let slot = t % ring
                let p = points[t]
                var lon = p.longitude
                if lon < gridLon0 { lon += 360 } else if lon > gridLon0 + width { lon -= 360 }
                let fx = (lon - gridLon0) / cellLonDegrees, fy = (p.latitude - gridLat0) / cellLatDegrees
                // Also false for NaN.
                guard fx >= 0, fx < Double(columns), fy >= 0, fy < Double(rows) else {
                    cells[slot] = -1
                    return
                }
                let ci = Int(fx), cj = Int(fy)
                cells[slot] = Int32(truncatingIfNeeded: cj * columns + ci)
                geomon_prefetch(starts.baseAddress! + cj * columns + ci)
                geomon_prefetch(starts.baseAddress! + cj * columns + ci + 1)
            }
            @inline(__always) func stage1(_ t: Int) {
                guard t >= 0, t < n else { return }
                let slot = t % ring
                let c = Int(cells[slot])
                counts[slot] = 0
                guard c >= 0 else { return }
                var e = Int(starts[c])
                let end = Int(starts[c + 1])
                if e < end { geomon_prefetch(members.baseAddress! + end - 1) }
                while e < end {
                    geomon_prefetch(members.baseAddress! + e)
                    e += 3
                }
            }
            @inline(__always) func stage2(_ t: Int) {
                guard t >= 0, t < n else { return }
                let slot = t % ring
                let c = Int(cells[slot])
                guard c >= 0 else { return }
                var listed = 0
                for e in Int(starts[c])..<Int(starts[c + 1]) where listed < listCapacity {
                    let f = members[e].fence
                    lists[slot * listCapacity + listed] = f
                    listed += 1
                    Self.prefetchWhole(records.baseAddress! + Int(f))
                }
                counts[slot] = Int32(listed)
            }
            @inline(__always) func stage3(_ t: Int) {
                guard t >= 0, t < n else { return }
                let slot = t % ring
                // Only the polygons the query is likely to scan: those whose
                // containment the radii leave open, and the one with the smallest lower
                // bound on the boundary distance (the query scans in that order and
                // usually stops after one).
                let p = points[t]
                var polygonsListed = 0
                var closest = UInt32.max
                var closestBound = Double.infinity
                for i in 0..<Int(counts[slot]) {
                    let record = records[Int(lists[slot * listCapacity + i])]
                    guard record.polygon != UInt32.max else { continue }
                    let east = Geodesy.longitudeDelta(record.centerLon, p.longitude) * k.longitude
                    let north = (p.latitude - record.centerLat) * k.latitude
                    let d = (east * east + north * north).squareRoot()
                    let bound = d < Double(record.inner) ? Double(record.inner) - d : d - Double(record.outer)
                    if bound <= 0 {
                        lists[slot * listCapacity + polygonsListed] = record.polygon & ~Self.corridorBit
                        polygonsListed += 1
                    } else if bound < closestBound {
                        closestBound = bound
                        closest = record.polygon & ~Self.corridorBit
                    }
                }
                if closest != UInt32.max {
                    lists[slot * listCapacity + polygonsListed] = closest
                    polygonsListed += 1
                }
                for i in 0..<polygonsListed {
                    Self.prefetchWhole(headers.baseAddress! + Int(lists[slot * listCapacity + i]))
                }
                counts[slot] = Int32(polygonsListed)
            }
            @inline(__always) func stage4(_ t: Int) {
                guard t >= 0, t < n else { return }
                let slot = t % ring
                for i in 0..<Int(counts[slot]) {
                    let h = headers[Int(lists[slot * listCapacity + i])]
                    let count = Int(h.vertexEnd) - Int(h.vertexStart)
                    guard count <= 160 else { continue }
                    var o = 2 * Int(h.vertexStart)
                    let end = 2 * Int(h.vertexEnd)
                    while o < end {
                        geomon_prefetch(v.baseAddress! + o)
                        o += 16
                    }
                    geomon_prefetch(v.baseAddress! + end - 1)
                }
            }
            for j in -(stages * d)..<n {
                stage0(j + stages * d); stage1(j + (stages - 1) * d); stage2(j + (stages - 2) * d)
                stage3(j + (stages - 3) * d); stage4(j + (stages - 4) * d)
                guard j >= 0 else { continue }
                query(points[j], within: searchRadiusMeters, wantNearest: true, into: &result)
                body(j, result)
            }
        }
        }
        }
        }
        }
        }
        }
        }
    }
}
