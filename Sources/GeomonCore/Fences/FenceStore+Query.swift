#if canImport(Glibc)
import Glibc
#endif

/// What one scan over a polygon's edges found. Distances in local metres from the point.
struct EdgeScanResult {
    var inside: Bool
    var onBoundary: Bool
    /// Distance to the nearest edge, or +infinity when none is within the scan's limit.
    var distance: Double
    /// Offset (east, north) in metres from the point to the nearest boundary point.
    var nearestEast: Double
    var nearestNorth: Double
}

/// Mutable state of one query's search.
struct SearchState {
    /// The search radius: the best distance found so far, or a guaranteed upper bound on it
    /// (`bound`); nothing farther is looked at.
    var best: Double
    var nearest: Int = -1
    var nearestSigned: Double = .infinity
    /// |`nearestSigned`|, or the search radius before any fence is found.
    var nearestDistance: Double
    var collect: Bool = false
    var found: [FenceDistance] = []
    /// While finding the nearest boundary, also collect every fence whose boundary is within
    /// this distance (`found`); the search never narrows below it. 0: collect nothing.
    var band: Double = 0

    init(best: Double, collect: Bool = false, band: Double = 0) {
        self.best = best
        self.nearestDistance = best
        self.collect = collect
        self.band = band
    }

    @inline(__always)
    mutating func consider(_ fence: Int, _ signed: Double) {
        let a = abs(signed)
        if collect {
            if a <= best { found.append(FenceDistance(fence: fence, signedDistanceMeters: signed)) }
            return
        }
        if band > 0, a <= band { found.append(FenceDistance(fence: fence, signedDistanceMeters: signed)) }
        if a < nearestDistance || (a == nearestDistance && (nearest < 0 || fence < nearest)) {
            nearestDistance = a
            nearest = fence
            nearestSigned = signed
        }
        if a < best { best = max(a, band) }
    }

    /// Narrows the search to `upper`, an upper bound on the distance of a fence that will be
    /// evaluated (it is not pruned: its lower bound is below its distance).
    @inline(__always)
    mutating func bound(_ upper: Double) {
        if !collect && upper < best { best = max(upper, band) }
    }
}

extension FenceStore {
    // MARK: Polygon edges

    /// Point-in-polygon (even-odd, boundary detected) and distance to the nearest edge for a
    /// point at offset (`px`, `py`) degrees from the fence centre, with metric `kx`, `ky`
    /// (metres per degree). `pip` false skips the containment part; distances beyond `limit`
    /// are not searched for. `inner` and `outer` (the fence record's radii, metres) narrow the
    /// angular scan's window; the defaults assume nothing.
    func edgeScan(polygon: Int, px: Double, py: Double, kx: Double, ky: Double,
                  limit: Double = .infinity, pip: Bool = true, inner: Double = 0, outer: Double = .infinity) -> EdgeScanResult {
        let record = polygons[polygon]
        let start = Int(record.vertexStart), end = Int(record.vertexEnd)
        var acc = EdgeAccumulator(px: px, py: py, kx: kx, ky: ky, best2: limit * limit, wantDistance: limit > 0)
        if record.stripCount == UInt32.max {
            sectorScan(record, &acc, pip: pip, inner: inner, outer: outer)
            return EdgeScanResult(inside: acc.inside, onBoundary: acc.onBoundary,
                                  distance: acc.found ? acc.best2.squareRoot() : .infinity,
                                  nearestEast: acc.nearestEast, nearestNorth: acc.nearestNorth)
        }
        vertices.withUnsafeBufferPointer { v in
            if record.stripCount == 0 {
                if end - start >= 2 {
                    for i in start..<(end - 1) { acc.edge(v, i, pip: pip) }
                }
                return
            }
            stripStarts.withUnsafeBufferPointer { starts in
                stripEdges.withUnsafeBufferPointer { edges in
                    let strips = Int(record.stripCount)
                    let lat0 = Double(record.stripLat0), perDegree = Double(record.stripsPerDegree)
                    // The strip holding the point's latitude, clamped: a point on the top edge
                    // can round to `strips` itself, and one beyond the ring's latitudes meets
                    // no edge that crosses its own, so the clamped strip answers it too.
                    let fs = (Float(py) - record.stripLat0) * record.stripsPerDegree
                    let s0 = fs < 0 ? 0 : (fs >= Float(strips) ? strips - 1 : Int(fs))
                    let base = Int(record.stripStart)
                    func scan(_ s: Int, pip: Bool) {
                        for e in Int(starts[base + s])..<Int(starts[base + s + 1]) {
                            acc.edge(v, start + Int(edges[e]), pip: pip)
                        }
                    }
                    scan(s0, pip: pip)
                    guard acc.wantDistance else { return }
                    var step = 1
                    while true {
                        var any = false
                        let below = s0 - step, above = s0 + step
                        if below >= 0 {
                            let gap = max(0, (py - (lat0 + Double(below + 1) / perDegree)) * ky)
                            if gap * gap <= acc.best2 { scan(below, pip: false); any = true }
                        }
                        if above < strips {
                            let gap = max(0, ((lat0 + Double(above) / perDegree) - py) * ky)
                            if gap * gap <= acc.best2 { scan(above, pip: false); any = true }
                        }
                        if !any { break }
                        step += 1
                    }
                }
            }
        }
        return EdgeScanResult(inside: acc.inside, onBoundary: acc.onBoundary,
                              distance: acc.found ? acc.best2.squareRoot() : .infinity,
                              nearestEast: acc.nearestEast, nearestNorth: acc.nearestNorth)
    }

    /// Edge scan for a star-shaped polygon with an angular index: containment from the one
    /// edge the ray centre→point crosses, distance from the edges within the angular window
    /// that the best distance so far allows.
    ///
    /// Rings after the first (holes, further members; even-odd over all rings) are scanned
    /// whole, for containment only when the point is within their reach from the centre
    /// (`stripLat0`), and for the distance only when that reach leaves them able to beat the
    /// best distance.
    private func sectorScan(_ record: PolygonRecord, _ acc: inout EdgeAccumulator, pip: Bool, inner: Double, outer: Double) {
        let start = Int(record.vertexStart)
        let n = Int(record.stripStart)
        let others = start + n + 2, end = Int(record.vertexEnd)
        let scale = Double(record.stripsPerDegree)
        let turn = 4.0 // pseudo-angle units per turn
        // The point's distance from the centre, in metres.
        let east = acc.px * acc.kx, north = acc.py * acc.ky
        let dc = (east * east + north * north).squareRoot()
        vertices.withUnsafeBufferPointer { v in
            @inline(__always) func scanOtherRings() {
                guard others < end else { return }
                // Margins as for the radii below: the reach 1 % wider and 5 cm.
                let reach = 1.01 * Double(record.stripLat0) + 0.05
                let gap = dc - reach
                let distance = acc.wantDistance && (gap <= 0 || gap * gap <= acc.best2)
                if pip && gap <= 0 {
                    if distance {
                        for i in others..<(end - 1) { acc.edge(v, i, pip: true) }
                    } else {
                        var probe = EdgeAccumulator(px: acc.px, py: acc.py, kx: acc.kx, ky: acc.ky, best2: 0, wantDistance: false)
                        for i in others..<(end - 1) { probe.edge(v, i, pip: true) }
                        if probe.inside { acc.inside.toggle() }
                        if probe.onBoundary { acc.onBoundary = true }
                    }
                } else if distance {
                    for i in others..<(end - 1) { acc.edge(v, i, pip: false) }
                }
            }
            // The vertex angles are computed from the vertices, not stored: `unwrappedAngle`
            // gives exactly the values `buildSectors` checked to increase strictly.
            let first = Self.vertexAngle(v, start, scale)
            @inline(__always) func angle(_ i: Int) -> Double {
                Self.unwrappedAngle(v, start, i, n, scale, first: first)
            }
            // Vertex i's offset from the centre in the frame (x·scale, y).
            @inline(__always) func direction(_ i: Int) -> (x: Double, y: Double) {
                (Double(v[2 * (start + i)]) * scale, Double(v[2 * (start + i) + 1]))
            }
            let x = acc.px * scale, y = acc.py
            var phi = Self.pseudoAngle(x, y)
            if phi < first { phi += turn } else if phi >= first + turn { phi -= turn }
            // Edge k spans angles [angle(k), angle(k + 1)). Guess k from phi as if the angles
            // were evenly spread, walk a few steps (one or two cache lines, near the vertices
            // needed next), else binary search.
            var k = Int((phi - first) * 0.25 * Double(n))
            k = k < 0 ? 0 : (k >= n ? n - 1 : k)
            // Each angle is computed once (a division each): edge k's ends are kept (the
            // window's expansion below needs no angle).
            var low = angle(k), high = angle(k + 1)
            var steps = 0
            while k + 1 < n && high <= phi && steps < 8 { k += 1; low = high; high = angle(k + 1); steps += 1 }
            while k > 0 && low > phi && steps < 8 { k -= 1; high = low; low = angle(k); steps += 1 }
            if steps >= 8 {
                var lo = 0, hi = n
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2
                    if angle(mid) <= phi { lo = mid } else { hi = mid }
                }
                k = lo
                low = angle(k)
                high = angle(k + 1)
            }
            if pip {
                let nearVertex = phi - low < 1e-5 || high - phi < 1e-5
                if nearVertex || (x == 0 && y == 0) {
                    // Too close to call from one edge: even-odd over the ring.
                    var probe = EdgeAccumulator(px: acc.px, py: acc.py, kx: acc.kx, ky: acc.ky, best2: 0, wantDistance: false)
                    for i in 0..<n { probe.edge(v, start + i, pip: true) }
                    acc.inside = probe.inside
                    acc.onBoundary = probe.onBoundary
                } else {
                    let (ax, ay) = direction(k), (bx, by) = direction(k + 1)
                    let cross = (bx - ax) * (y - ay) - (by - ay) * (x - ax)
                    acc.inside = cross > 0
                    acc.onBoundary = cross == 0
                }
            }
            guard acc.wantDistance else {
                scanOtherRings()
                return
            }
            acc.edge(v, start + k, pip: false)
            // Window: the nearest boundary point is within the best distance b of the
            // point, so its bearing from the centre is within w = asin(b / centre distance)
            // of the point's (plus a margin for the frame's approximation: w' = asin(1.02
            // b / dc + 0.01) ≥ 1.02 w + 0.01), between the point's direction turned by ∓w'
            // (no trigonometry: sin w' and cos w' are known).
            var scanned = 1
            var left = k, right = k
            // The window's ends as directions: the point's direction turned by ∓w' (w' < 90°,
            // else the window is the whole turn). An edge is scanned next when its vertex
            // nearer the point's bearing is within the window: counter-clockwise of the left
            // end (right: clockwise of the right end), one cross product and no angle. That
            // vertex is always less than a half turn from the window's end (it follows a
            // vertex inside the window, or edge k's, by an edge under a half turn), so the
            // cross product's sign is the angular order.
            var windowBest2 = Double.infinity, whole = true
            var leftX = 0.0, leftY = 0.0, rightX = 0.0, rightY = 0.0
            while scanned < n {
                if !(acc.best2 >= 0.81 * windowBest2) {
                    // The window only narrows when the best distance does, and is recomputed
                    // only when it has shrunk by a tenth (or at first): a window for a larger
                    // best distance is wider, never wrong.
                    windowBest2 = acc.best2
                    var sine = dc > 0 ? 1.02 * acc.best2.squareRoot() / dc + 0.01 : 2
                    // Tighter: the nearest boundary point Q is also at a distance q from
                    // the centre between the fence's inner and outer radii. With b ≥ |QP|,
                    // cos(angle QCP) ≥ (dc² + q² − b²) / (2 dc q), whose minimum over q in
                    // [inner, outer] is at q = √(dc² − b²) clamped into that range. A point
                    // outside a round fence then scans the one or two edges facing it, not
                    // every edge within asin(b / dc). Margins: b 2 % larger, the radii 1 %
                    // wider (the radii are in the centre's metric), and the same 0.01.
                    if dc > 0 {
                        let b = 1.02 * acc.best2.squareRoot() + 0.05
                        let low = 0.99 * max(0, inner), high = 1.01 * outer + 0.05
                        let q = min(max((max(0, dc * dc - b * b)).squareRoot(), low), high)
                        if q > 0 {
                            let least = (dc * dc + q * q - b * b) / (2 * dc * q)
                            if least > 0 { sine = min(sine, (max(0, 1 - least * least)).squareRoot() + 0.01) }
                        }
                    }
                    whole = !(sine < 1)
                    if !whole {
                        let cosine = (1 - sine * sine).squareRoot()
                        leftX = x * cosine + y * sine; leftY = y * cosine - x * sine
                        rightX = x * cosine - y * sine; rightY = y * cosine + x * sine
                    }
                }
                var progressed = false
                // The next edge to the left ends at vertex `left`; wraps around. Never back
                // at k: scanned < n.
                if scanned < n {
                    let u = direction(left)
                    if whole || leftX * u.y - leftY * u.x >= 0 {
                        left = left == 0 ? n - 1 : left - 1
                        acc.edge(v, start + left, pip: false)
                        scanned += 1
                        progressed = true
                    }
                }
                // The next edge to the right starts at vertex `right + 1`.
                if scanned < n {
                    let u = direction(right + 1)
                    if whole || u.x * rightY - u.y * rightX >= 0 {
                        right = right == n - 1 ? 0 : right + 1
                        acc.edge(v, start + right, pip: false)
                        scanned += 1
                        progressed = true
                    }
                }
                if !progressed { break }
            }
            scanOtherRings()
        }
    }

    // MARK: Single fence

    /// Signed distance for one fence, by direct evaluation.
    func signedDistance(fence f: Int, to p: Coordinate) -> Double {
        guard f >= 0, f < count, p.latitude.isFinite, p.longitude.isFinite else { return .nan }
        let k = Geodesy.metersPerDegree(atLatitude: p.latitude)
        let fence = fences[Int(internalIDs[f])]
        let dlon = Geodesy.longitudeDelta(fence.centerLon, p.longitude)
        let dlat = p.latitude - fence.centerLat
        if fence.polygon == UInt32.max {
            let t = tan(p.latitude * Geodesy.radiansPerDegree)
            return centerDistance(p, fence, dlon: dlon, dlat: dlat, kx: k.longitude, ky: k.latitude, tanLat: t) - Double(fence.outer)
        }
        if fence.polygon & Self.corridorBit != 0 {
            let polygon = Int(fence.polygon & ~Self.corridorBit)
            let r = edgeScan(polygon: polygon, px: dlon, py: dlat, kx: k.longitude, ky: k.latitude, pip: false)
            guard r.distance.isFinite else { return .infinity }
            return refined(p, r, kx: k.longitude, ky: k.latitude) - halfWidth(corridor: polygon)
        }
        let insideBox = dlon >= Double(fence.minX) && dlon <= Double(fence.maxX)
            && dlat >= Double(fence.minY) && dlat <= Double(fence.maxY)
        let r = edgeScan(polygon: Int(fence.polygon), px: dlon, py: dlat, kx: k.longitude, ky: k.latitude, pip: insideBox,
                         inner: Double(fence.inner), outer: Double(fence.outer))
        let d = refined(p, r, kx: k.longitude, ky: k.latitude)
        return insideBox && (r.inside || r.onBoundary) ? -d : d
    }

    /// Distance from `p` to fence `f`'s centre in metres (mean-latitude metric; ellipsoidal
    /// beyond 20 km).
    @inline(__always)
    func centerDistance(_ p: Coordinate, _ fence: FenceRecord, dlon: Double, dlat: Double, kx: Double, ky: Double, tanLat t: Double) -> Double {
        let d2 = Self.localDistance2(dlon: dlon, dlat: dlat, kx: kx, ky: ky, tanLat: t)
        if d2 < 20_000 * 20_000 { return d2.squareRoot() }
        return Geodesy.distanceMeters(from: p, to: Coordinate(latitude: fence.centerLat, longitude: fence.centerLon))
    }

    /// The square of `centerDistance`, without its square root within 20 km.
    @inline(__always)
    func centerDistance2(_ p: Coordinate, _ fence: FenceRecord, dlon: Double, dlat: Double, kx: Double, ky: Double, tanLat t: Double) -> Double {
        let d2 = Self.localDistance2(dlon: dlon, dlat: dlat, kx: kx, ky: ky, tanLat: t)
        if d2 < 20_000 * 20_000 { return d2 }
        let d = Geodesy.distanceMeters(from: p, to: Coordinate(latitude: fence.centerLat, longitude: fence.centerLon))
        return d * d
    }

    /// Squared distance in metres for an offset in degrees, the east component scaled to the
    /// mean latitude (first order in the latitude change).
    @inline(__always)
    static func localDistance2(dlon: Double, dlat: Double, kx: Double, ky: Double, tanLat t: Double) -> Double {
        let east = dlon * kx * (1 + t * dlat * Geodesy.radiansPerDegree / 2)
        let north = dlat * ky
        return east * east + north * north
    }

    /// The scan's nearest-edge distance, refined to the mean-latitude metric (and to the
    /// ellipsoid beyond 50 km) using the nearest boundary point.
    func refined(_ p: Coordinate, _ r: EdgeScanResult, kx: Double, ky: Double) -> Double {
        guard r.distance.isFinite, r.distance > 1000 else { return r.distance }
        let q = Coordinate(latitude: p.latitude + r.nearestNorth / ky, longitude: p.longitude + r.nearestEast / kx)
        if r.distance < 50_000 { return Geodesy.localDistanceMeters(from: p, to: q) }
        return Geodesy.distanceMeters(from: p, to: q)
    }

    // MARK: Queries

    func query(_ p: Coordinate, within searchRadiusMeters: Double, wantNearest: Bool, into result: inout FenceQueryResult) {
        // Most points are in no fence: no call into the generic `removeAll` for them.
        if !result.containing.isEmpty { result.containing.removeAll(keepingCapacity: true) }
        result.nearest = nil
        let radius = searchRadiusMeters.isNaN ? 0 : max(0, searchRadiusMeters)
        result.clearanceMeters = radius
        guard count > 0, p.latitude.isFinite, p.longitude.isFinite, abs(p.latitude) <= 90 else { return }
        var state = SearchState(best: wantNearest ? radius : 0)
        let passes = search(p, wantNearest: wantNearest, state: &state, containing: &result.containing)
        if result.containing.count > 1 {
            result.containing.sort()
        }
        if passes > 1, result.containing.count > 1 {
            var unique: [Int] = []
            for f in result.containing where unique.last != f { unique.append(f) }
            result.containing = unique
        }
        if wantNearest, state.nearest >= 0 {
            result.nearest = FenceDistance(fence: state.nearest, signedDistanceMeters: state.nearestSigned)
            result.clearanceMeters = abs(state.nearestSigned)
        }
    }

    /// One pass for the monitor: containing fences, the nearest boundary within
    /// `searchRadiusMeters`, and every fence whose boundary is within `bandMeters` (at most the
    /// search radius), ascending by fence.
    func probe(_ p: Coordinate, within searchRadiusMeters: Double, band bandMeters: Double, into result: inout FenceProbe) {
        result.containing.removeAll(keepingCapacity: true)
        result.band.removeAll(keepingCapacity: true)
        result.nearest = nil
        let radius = searchRadiusMeters.isNaN ? 0 : max(0, searchRadiusMeters)
        let band = bandMeters.isNaN ? 0 : min(radius, max(0, bandMeters))
        result.searchRadiusMeters = radius
        result.bandMeters = band
        guard count > 0, p.latitude.isFinite, p.longitude.isFinite, abs(p.latitude) <= 90 else { return }
        var state = SearchState(best: radius, band: band)
        let passes = search(p, wantNearest: true, state: &state, containing: &result.containing)
        if result.containing.count > 1 { result.containing.sort() }
        if passes > 1, result.containing.count > 1 {
            var unique: [Int] = []
            for f in result.containing where unique.last != f { unique.append(f) }
            result.containing = unique
        }
        if !state.found.isEmpty {
            state.found.sort { $0.fence < $1.fence }
            for d in state.found where result.band.last?.fence != d.fence { result.band.append(d) }
        }
        if state.nearest >= 0 {
            result.nearest = FenceDistance(fence: state.nearest, signedDistanceMeters: state.nearestSigned)
        }
    }

    func near(_ p: Coordinate, within radiusMeters: Double) -> [FenceDistance] {
        let radius = radiusMeters.isNaN ? 0 : max(0, radiusMeters)
        guard count > 0, p.latitude.isFinite, p.longitude.isFinite, abs(p.latitude) <= 90 else { return [] }
        var state = SearchState(best: radius, collect: true)
        var containing: [Int] = []
        _ = search(p, wantNearest: true, state: &state, containing: &containing)
        state.found.sort { $0.fence < $1.fence }
        var unique: [FenceDistance] = []
        for d in state.found where unique.last?.fence != d.fence { unique.append(d) }
        return unique
    }

    /// Runs the grid search for `p` and its ±360° longitude images that can matter.
    /// Returns how many passes ran.
    private func search(_ p: Coordinate, wantNearest: Bool, state: inout SearchState, containing: inout [Int]) -> Int {
        let k = Geodesy.metersPerDegree(atLatitude: p.latitude)
        let tanLat = tan(p.latitude * Geodesy.radiansPerDegree)
        let lon = (p.longitude >= -180 && p.longitude < 180) ? p.longitude : Geodesy.normalizedLongitude(p.longitude)
        let gridLon1 = gridLon0 + cellLonDegrees * Double(columns)
        var passes = 0
        fences.withUnsafeBufferPointer { records in
            cellStarts.withUnsafeBufferPointer { starts in
                cellFences.withUnsafeBufferPointer { members in
                    withUnsafeTemporaryAllocation(of: Int32.self, capacity: 32) { seen in
                    withUnsafeTemporaryAllocation(of: Candidate.self, capacity: Candidate.perQuery) { pending in
                        var shift = 0.0
                        for pass in 0..<3 {
                            if pass == 1 { shift = -360 } else if pass == 2 { shift = 360 }
                            let plon = lon + shift
                            let gap = max(0, gridLon0 - plon, plon - gridLon1) * k.longitude
                            if pass != 0, gap > state.best || (gap > 0 && !wantNearest) { continue }
                            passes += 1
                            var context = SearchContext(p: p, plon: plon, kx: k.longitude, ky: k.latitude, tanLat: tanLat,
                                                        wantNearest: wantNearest, records: records, starts: starts,
                                                        members: members, seen: seen, seenCount: 0,
                                                        pending: pending, pendingCount: 0)
                            searchGrid(&context, state: &state, containing: &containing)
                        }
                    }
                    }
                }
            }
        }
        return passes
    }

    private func searchGrid(_ c: inout SearchContext, state: inout SearchState, containing: inout [Int]) {
        let fx = (c.plon - gridLon0) / cellLonDegrees
        let fy = (c.p.latitude - gridLat0) / cellLatDegrees
        let inGrid = fx >= 0 && fx < Double(columns) && fy >= 0 && fy < Double(rows)
        let ci = fx < 0 ? 0 : (fx >= Double(columns) ? columns - 1 : Int(fx))
        let cj = fy < 0 ? 0 : (fy >= Double(rows) ? rows - 1 : Int(fy))
        visit(ci, cj, ring0: inGrid, &c, state: &state, containing: &containing)
        guard c.wantNearest else { return }
        settle(&c, state: &state)
        let cellWidth = cellLonDegrees * c.kx, cellHeight = cellLatDegrees * c.ky
        // A fence first listed in ring `ring` has its box more than `cellMargin` cells beyond
        // the inner rings.
        let m = cellMargin * (1 - 1e-9)
        var ring = 1
        while true {
            var lb = Double.infinity
            if ci - ring >= 0 { lb = min(lb, (max(0, fx - Double(ci - ring + 1)) + m) * cellWidth) }
            if ci + ring < columns { lb = min(lb, (max(0, Double(ci + ring) - fx) + m) * cellWidth) }
            if cj - ring >= 0 { lb = min(lb, (max(0, fy - Double(cj - ring + 1)) + m) * cellHeight) }
            if cj + ring < rows { lb = min(lb, (max(0, Double(cj + ring) - fy) + m) * cellHeight) }
            if lb == .infinity || lb > state.best { break }
            // Within the ring, a cell farther from the point than the best distance is
            // skipped: a fence that matters has its box's point nearest to the point in a
            // cell at most that far, or (beyond the rings visited) within the margin of one.
            @inline(__always) func near(_ i: Int, _ j: Int) -> Bool {
                let dx = i > ci ? Double(i) - fx : (i < ci ? fx - Double(i + 1) : 0)
                let dy = j > cj ? Double(j) - fy : (j < cj ? fy - Double(j + 1) : 0)
                let ex = max(0, dx) * cellWidth, ny = max(0, dy) * cellHeight
                return ex * ex + ny * ny <= state.best * state.best
            }
            let i0 = max(0, ci - ring), i1 = min(columns - 1, ci + ring)
            if cj + ring < rows { for i in i0...i1 where near(i, cj + ring) { visit(i, cj + ring, ring0: false, &c, state: &state, containing: &containing) } }
            if cj - ring >= 0 { for i in i0...i1 where near(i, cj - ring) { visit(i, cj - ring, ring0: false, &c, state: &state, containing: &containing) } }
            let j0 = max(0, cj - ring + 1), j1 = min(rows - 1, cj + ring - 1)
            if j0 <= j1 {
                if ci - ring >= 0 { for j in j0...j1 where near(ci - ring, j) { visit(ci - ring, j, ring0: false, &c, state: &state, containing: &containing) } }
                if ci + ring < columns { for j in j0...j1 where near(ci + ring, j) { visit(ci + ring, j, ring0: false, &c, state: &state, containing: &containing) } }
            }
            settle(&c, state: &state)
            ring += 1
        }
    }

    @inline(__always)
    private func visit(_ i: Int, _ j: Int, ring0: Bool, _ c: inout SearchContext, state: inout SearchState, containing: inout [Int]) {
        let cell = j * columns + i
        let lo = Int(c.starts[cell]), hi = Int(c.starts[cell + 1])
        if lo == hi { return }
        let px = c.plon, py = c.p.latitude
        for e in lo..<hi {
            let entry = c.members[e]
            let x0 = Double(entry.minLon), x1 = Double(entry.maxLon), y0 = Double(entry.minLat), y1 = Double(entry.maxLat)
            let gx = px < x0 ? x0 - px : (px > x1 ? px - x1 : 0)
            let gy = py < y0 ? y0 - py : (py > y1 ? py - y1 : 0)
            if gx != 0 || gy != 0 {
                if !c.wantNearest { continue }
                let ex = gx * c.kx, ny = gy * c.ky
                if ex * ex + ny * ny > state.best * state.best { continue }
            }
            evaluate(Int(entry.fence), ring0: ring0, &c, state: &state, containing: &containing)
        }
    }

    @inline(__always)
    private func evaluate(_ f: Int, ring0: Bool, _ c: inout SearchContext, state: inout SearchState, containing: inout [Int]) {
        let fence = c.records[f]
        var dlon = c.plon - fence.centerLon
        if dlon >= 180 { dlon -= 360 } else if dlon < -180 { dlon += 360 }
        let dlat = c.p.latitude - fence.centerLat
        let minX = Double(fence.minX), maxX = Double(fence.maxX)
        let minY = Double(fence.minY), maxY = Double(fence.maxY)
        let gx = dlon < minX ? minX - dlon : (dlon > maxX ? dlon - maxX : 0)
        let gy = dlat < minY ? minY - dlat : (dlat > maxY ? dlat - maxY : 0)
        let insideBox = gx == 0 && gy == 0
        let canContain = insideBox && ring0
        var lb2Box = 0.0
        if !insideBox {
            if !c.wantNearest { return }
            let ex = gx * c.kx, ny = gy * c.ky
            lb2Box = ex * ex + ny * ny
            if lb2Box > state.best * state.best { return }
        }
        let ref = fence.polygon
        if ref == UInt32.max {
            let dc = centerDistance(c.p, fence, dlon: dlon, dlat: dlat, kx: c.kx, ky: c.ky, tanLat: c.tanLat)
            let sd = dc - Double(fence.outer)
            if sd <= 0 && canContain { containing.append(Int(fence.external)) }
            if c.wantNearest { state.consider(Int(fence.external), sd) }
            return
        }
        if ref & Self.corridorBit != 0 {
            // Inside when the nearest line is within the half width: one scan for both.
            if !canContain && (!c.wantNearest || c.seenContains(f)) { return }
            let polygon = Int(ref & ~Self.corridorBit)
            let h = halfWidth(corridor: polygon)
            let r = edgeScan(polygon: polygon, px: dlon, py: dlat, kx: c.kx, ky: c.ky,
                             limit: c.wantNearest ? state.best + h : h, pip: false)
            guard r.distance.isFinite else { return }
            let sd = refined(c.p, r, kx: c.kx, ky: c.ky) - h
            if sd <= 0 && canContain { containing.append(Int(fence.external)) }
            if c.wantNearest { state.consider(Int(fence.external), sd) }
            return
        }
        // A polygon's radii are conservative bounds: compared squared, without the square
        // roots, which are taken only for a candidate kept for later.
        let inner = Double(fence.inner), outer = Double(fence.outer)
        let dc2 = centerDistance2(c.p, fence, dlon: dlon, dlat: dlat, kx: c.kx, ky: c.ky, tanLat: c.tanLat)
        let knownInside = inner > 0 && dc2 < inner * inner
        let knownOutside = !insideBox || dc2 > outer * outer
        if knownInside || knownOutside {
            if knownInside && canContain { containing.append(Int(fence.external)) }
            if !c.wantNearest { return }
            // The lower bound max(box gap, dc − outer, |inner| − dc) beyond the best distance?
            let reach = state.best + outer, within = abs(inner) - state.best
            if dc2 > reach * reach || (within > 0 && dc2 < within * within) { return }
            let dc = dc2.squareRoot()
            let lb = max(lb2Box.squareRoot(), dc - outer, abs(inner) - dc)
            if lb > state.best { return }
            // This fence's distance has an upper bound too, which narrows the rest of the
            // search before any distance is known: the ray from the centre through the point
            // crosses the boundary between the radii (if the centre is inside), and all the
            // boundary is within `outer` of the centre. With 5 % and 1 m to spare for the
            // metrics (the point's, the centre's), and only within 20 km.
            let upper = knownInside ? outer - dc : (inner > 0 ? dc - inner : dc + outer)
            if upper < 20_000 { state.bound(1.05 * upper + 1) }
            // Only the distance is left to find: defer, nearest lower bound first.
            if c.pendingCount < c.pending.count {
                c.pending[c.pendingCount] = Candidate(fence: Int32(truncatingIfNeeded: f), inside: knownInside && insideBox,
                                                     lowerBound: lb, dlon: dlon, dlat: dlat)
                c.pendingCount += 1
                return
            }
            if c.seenContains(f) { return }
            let r = edgeScan(polygon: Int(ref), px: dlon, py: dlat, kx: c.kx, ky: c.ky, limit: state.best, pip: false,
                             inner: inner, outer: outer)
            if r.distance.isFinite {
                let d = refined(c.p, r, kx: c.kx, ky: c.ky)
                state.consider(Int(fence.external), knownInside && insideBox ? -d : d)
            }
            return
        }
        if !canContain && c.seenContains(f) { return }
        let r = edgeScan(polygon: Int(ref), px: dlon, py: dlat, kx: c.kx, ky: c.ky,
                         limit: c.wantNearest ? state.best : 0, pip: insideBox, inner: inner, outer: outer)
        let inside = insideBox && (r.inside || r.onBoundary)
        if inside && canContain { containing.append(Int(fence.external)) }
        if c.wantNearest, r.distance.isFinite {
            let d = refined(c.p, r, kx: c.kx, ky: c.ky)
            state.consider(Int(fence.external), inside ? -d : d)
        }
    }
}

extension FenceStore {
    /// Evaluates the deferred candidates in order of their lower bounds, while they can
    /// still beat the best distance. Usually one or two of a handful are evaluated, so each
    /// is found by a selection over the rest, not by sorting them all.
    fileprivate func settle(_ c: inout SearchContext, state: inout SearchState) {
        let n = c.pendingCount
        if n == 0 { return }
        let buffer = c.pending
        var done = 0
        while done < n {
            var m = done
            for i in (done + 1)..<n where buffer[i].lowerBound < buffer[m].lowerBound { m = i }
            let candidate = buffer[m]
            if candidate.lowerBound > state.best { break }
            buffer[m] = buffer[done]
            done += 1
            let f = Int(candidate.fence)
            if c.seenContains(f) { continue }
            let fence = c.records[f]
            let r = edgeScan(polygon: Int(fence.polygon), px: candidate.dlon, py: candidate.dlat,
                             kx: c.kx, ky: c.ky, limit: state.best, pip: false,
                             inner: Double(fence.inner), outer: Double(fence.outer))
            if r.distance.isFinite {
                let d = refined(c.p, r, kx: c.kx, ky: c.ky)
                state.consider(Int(fence.external), candidate.inside ? -d : d)
            }
        }
        c.pendingCount = 0
    }
}

/// A polygon whose containment is known and whose distance may still matter.
struct Candidate {
    var fence: Int32
    var inside: Bool
    var lowerBound: Double
    var dlon: Double
    var dlat: Double

    /// Candidates deferred per search pass; beyond them a candidate is evaluated at once
    /// (the same result, without the ordering). 1 KB of them: a temporary allocation of up
    /// to 1,024 bytes is on the stack, a larger one is a `malloc` and `free` per query.
    static let perQuery = 1024 / MemoryLayout<Candidate>.stride
}

/// Per-pass constants of a grid search, and the fences already evaluated exactly.
struct SearchContext {
    var p: Coordinate
    var plon: Double
    var kx: Double
    var ky: Double
    var tanLat: Double
    var wantNearest: Bool
    var records: UnsafeBufferPointer<FenceRecord>
    var starts: UnsafeBufferPointer<UInt32>
    var members: UnsafeBufferPointer<CellEntry>
    var seen: UnsafeMutableBufferPointer<Int32>
    var seenCount: Int
    var pending: UnsafeMutableBufferPointer<Candidate>
    var pendingCount: Int

    /// True when `f` was evaluated exactly before in this pass; otherwise records it.
    @inline(__always)
    mutating func seenContains(_ f: Int) -> Bool {
        let v = Int32(truncatingIfNeeded: f)
        for i in 0..<seenCount where seen[i] == v { return true }
        if seenCount < seen.count {
            seen[seenCount] = v
            seenCount += 1
        }
        return false
    }
}

/// Accumulates crossings and the nearest edge over a polygon's edges.
struct EdgeAccumulator {
    let px: Double, py: Double, kx: Double, ky: Double
    var best2: Double
    let wantDistance: Bool
    var inside = false
    var onBoundary = false
    var found = false
    var nearestEast = 0.0, nearestNorth = 0.0

    init(px: Double, py: Double, kx: Double, ky: Double, best2: Double, wantDistance: Bool) {
        self.px = px; self.py = py; self.kx = kx; self.ky = ky
        self.best2 = best2; self.wantDistance = wantDistance
    }

    @inline(__always)
    mutating func edge(_ v: UnsafeBufferPointer<Float>, _ i: Int, pip: Bool) {
        let ax = Double(v[2 * i]), ay = Double(v[2 * i + 1])
        let bx = Double(v[2 * i + 2]), by = Double(v[2 * i + 3])
        // Ring separators are NaN: every comparison below is then false, so they count for
        // nothing without a branch of their own.
        if pip {
            if (ay > py) != (by > py) {
                let x = ax + (py - ay) * (bx - ax) / (by - ay)
                if px < x { inside.toggle() } else if px == x { onBoundary = true }
            } else if ay == py {
                if by == py ? (px >= min(ax, bx) && px <= max(ax, bx)) : px == ax { onBoundary = true }
            }
        }
        if wantDistance {
            let x0 = (ax - px) * kx, y0 = (ay - py) * ky
            let dx = (bx - ax) * kx, dy = (by - ay) * ky
            let len2 = dx * dx + dy * dy
            // t = dot / len2 clamped to [0, 1], dividing only between the ends, and only when
            // the edge's line (cross² / len2 away) could beat the best: most edges scanned
            // cannot. The factor covers rounding, so every edge that could win is computed
            // as before.
            let dot = -(x0 * dx + y0 * dy)
            let t: Double
            if dot <= 0 {
                t = 0
            } else if dot >= len2 {
                t = 1
            } else {
                let cross = x0 * dy - y0 * dx
                if cross * cross > best2 * len2 * (1 + 1e-9) { return }
                t = dot / len2
            }
            let cx = x0 + t * dx, cy = y0 + t * dy
            let d2 = cx * cx + cy * cy
            if d2 < best2 || (!found && d2 <= best2) {
                best2 = d2
                found = true
                nearestEast = cx
                nearestNorth = cy
            }
        }
    }
}
