#if canImport(Glibc)
import Glibc
#endif
internal import CMemoryHints

/// One polygon fence's vertex range and optional latitude-strip edge index.
struct PolygonRecord: Sendable {
    /// Vertices `vertexStart..<vertexEnd` in `FenceStore.vertices` (x, y pairs): each ring is
    /// stored closed and followed by a NaN separator, so edge `i` joins vertex `i` and `i + 1`.
    var vertexStart: UInt32
    var vertexEnd: UInt32
    /// First entry in `FenceStore.stripStarts`; `stripCount == 0` means no edge index,
    /// `UInt32.max` an angular (sector) index (`buildSectors`), and then `stripStart` is the
    /// first ring's vertex count.
    var stripStart: UInt32
    var stripCount: UInt32
    /// Latitude offset of the first strip's lower edge and strips per degree; for a sector
    /// index, the reach of the other rings from the centre (metres, 0 for none) and the
    /// frame's x scale.
    var stripLat0: Float
    var stripsPerDegree: Float
}

/// One fence: centre, bounding box and radii.
struct FenceRecord: Sendable {
    var centerLat: Double
    var centerLon: Double
    /// Bounding box as offsets from the centre in degrees (x = longitude).
    var minX: Float, maxX: Float, minY: Float, maxY: Float
    /// Minimum distance centre→boundary in metres, negative when the centre is outside the
    /// fence (conservative: slightly small).
    var inner: Float
    /// Maximum distance centre→boundary in metres (conservative: slightly large).
    var outer: Float
    /// Index into `FenceStore.polygons`, or `UInt32.max` for a circle (radius = `outer`). A
    /// corridor's has `FenceStore.corridorBit` set; its vertex range starts with the half
    /// width as a (value, NaN) pair, then its lines, each followed by a NaN separator.
    var polygon: UInt32
    /// The fence's number in the caller's order (records are stored in spatial order).
    var external: UInt32 = 0
}

/// A fence listed in a grid cell, with its bounding box (absolute degrees in the grid's
/// longitude range, rounded outward) so most candidates are rejected without touching the
/// fence record.
struct CellEntry: Sendable {
    var minLon: Float, minLat: Float, maxLon: Float, maxLat: Float
    var fence: UInt32
}

/// The compact storage and query code behind `FenceIndex`.
struct FenceStore: Sendable {
    /// One record per fence (48 bytes: one cache line access per candidate).
    var fences: ContiguousArray<FenceRecord> = []
    /// Caller's fence number → record number.
    var internalIDs: ContiguousArray<UInt32> = []

    var polygons: ContiguousArray<PolygonRecord> = []
    /// Vertex offsets from the fence centre in degrees, interleaved x (lon), y (lat).
    var vertices: ContiguousArray<Float> = []
    /// Strip `s` of a polygon lists edges `stripEdges[stripStarts[s]..<stripStarts[s+1]]`
    /// (edge numbers relative to the polygon's `vertexStart`).
    var stripStarts: ContiguousArray<UInt32> = []
    var stripEdges: ContiguousArray<UInt16> = []

    // The grid.
    var gridLon0 = 0.0, gridLat0 = 0.0
    var cellLonDegrees = 1.0, cellLatDegrees = 1.0
    var columns = 0, rows = 0
    var cellStarts: ContiguousArray<UInt32> = [0]
    var cellFences: ContiguousArray<CellEntry> = []

    /// Polygons with more vertices than this (separators included) get an edge index: an
    /// angular one when their first ring allows it (`buildSectors`), else strips (up to
    /// 65,535 vertices).
    static let stripThreshold = 24
    /// At most this many vertices (separators included) in the rings after the first of a
    /// sector-indexed polygon, which the query scans whole when a point is near them.
    static let sectorOtherVertices = 64
    /// Edges per strip aimed for.
    static let edgesPerStrip = 4
    /// A fence is listed in every cell within this fraction of a cell (per axis) of its
    /// bounding box, so the nearest-boundary search rarely needs the ring of cells around the
    /// point's cell: any fence not listed there is at least this margin farther away. The
    /// largest of `cellMargins` that keeps the cell entries within budget is used.
    var cellMargin = 0.0
    static let cellMargins = [0.3, 0.2, 0.1]

    /// The bytes the index holds: what its arrays store. Their capacities are left out: an
    /// array's capacity is what the allocator rounded its request up to, which depends on the
    /// heap (huge pages or not) and not on the fences.
    var bytes: Int {
        fences.count * MemoryLayout<FenceRecord>.stride + internalIDs.count * 4
            + polygons.count * MemoryLayout<PolygonRecord>.stride
            + vertices.count * 4 + stripStarts.count * 4 + stripEdges.count * 2
            + cellStarts.count * 4 + cellFences.count * MemoryLayout<CellEntry>.stride
    }

    var count: Int { fences.count }

    /// Marks a corridor's polygon number in `FenceRecord.polygon`.
    static let corridorBit: UInt32 = 1 << 31

    /// A corridor's half width in metres (its polygon number without `corridorBit`).
    @inline(__always)
    func halfWidth(corridor polygon: Int) -> Double {
        Double(vertices[2 * Int(polygons[polygon].vertexStart)])
    }
}

// MARK: - Building

extension FenceStore {
    init(shapes: [FenceShape]) {
        fences.reserveCapacity(shapes.count)
        Self.adviseHugePages(&fences)
        // One pass in input order: the sizes to reserve (a closing vertex and a separator per
        // ring), and where each shape's data lies, for the prefetches below.
        var floats = 0
        var polygonCount = 0
        var hints = [ShapeHint](repeating: ShapeHint(), count: shapes.count)
        for (i, shape) in shapes.enumerated() {
            guard case let .polygons(members) = shape else { continue }
            polygonCount += 1
            for member in members {
                floats += 2 * (member.shell.count + 2)
                for hole in member.holes { floats += 2 * (hole.count + 2) }
            }
            members.withUnsafeBufferPointer { list in
                hints[i].members = UInt(bitPattern: list.baseAddress)
                list.first?.shell.withUnsafeBufferPointer { ring in
                    hints[i].ring = UInt(bitPattern: ring.baseAddress)
                    hints[i].ringBytes = min(ring.count, 256) * MemoryLayout<Coordinate>.stride
                }
            }
        }
        vertices.reserveCapacity(floats)
        Self.adviseHugePages(&vertices)
        polygons.reserveCapacity(polygonCount)
        // Fences are built straight into Z-order of their position (records, polygon
        // headers and vertices alike), so that neighbours share cache lines and pages.
        // That reads the caller's shapes out of their allocation order, so each shape's data
        // is prefetched a few shapes ahead (a copy into Z-order after building in input order
        // cost more: twice the memory to fault in, and a scattered copy).
        let order = Self.spatialOrder(shapes)
        // The hints in slot order: one gather (its loads independent), then read in sequence.
        let slotHints = order.map { hints[$0] }
        var scratch = Scratch()
        shapes.withUnsafeBufferPointer { input in
            for slot in order.indices {
                if slot + 2 * Self.prefetchAhead < order.count {
                    geomon_prefetch(input.baseAddress! + order[slot + 2 * Self.prefetchAhead])
                }
                if slot + Self.prefetchAhead < order.count { slotHints[slot + Self.prefetchAhead].prefetch() }
                let external = order[slot]
                switch input[external] {
                case let .circle(center, radius):
                    addCircle(center: center, radiusMeters: radius)
                case let .polygons(members):
                    addPolygons(members, scratch: &scratch)
                case let .corridor(lines, width):
                    addCorridor(lines, widthMeters: width, scratch: &scratch)
                }
                fences[slot].external = UInt32(external)
            }
        }
        internalIDs = ContiguousArray(repeating: 0, count: shapes.count)
        for (slot, external) in order.enumerated() { internalIDs[external] = UInt32(slot) }
        buildGrid()
        // Drop the growth slack of the arrays built by appending.
        stripEdges = Self.exact(stripEdges)
        stripStarts = Self.exact(stripStarts)
    }

    /// Shapes ahead of the one being built whose data is prefetched (their hint entries and
    /// shapes at twice the distance).
    static let prefetchAhead = 3

    /// Where a polygon shape's data lies (addresses only, for prefetching: never read
    /// through): its members' array and its first ring's coordinates.
    struct ShapeHint {
        var members: UInt = 0
        var ring: UInt = 0
        var ringBytes = 0

        @inline(__always)
        func prefetch() {
            guard members != 0 else { return }
            // The array headers (32 bytes before the elements) and the elements.
            geomon_prefetch(UnsafeRawPointer(bitPattern: members &- 32))
            geomon_prefetch(UnsafeRawPointer(bitPattern: members &+ 16))
            guard ring != 0 else { return }
            var offset = -32
            while offset < ringBytes {
                geomon_prefetch(UnsafeRawPointer(bitPattern: ring &+ UInt(bitPattern: offset)))
                offset += 64
            }
        }
    }

    /// Shape indices sorted by the Morton code of a representative point.
    static func spatialOrder(_ shapes: [FenceShape]) -> [Int] {
        spatialOrder(points: shapes.map(representativePoint))
    }

    /// The point a shape is ordered by: a circle's centre, the first vertex otherwise.
    static func representativePoint(_ shape: FenceShape) -> (Double, Double) {
        func point(_ shape: FenceShape) -> (Double, Double) {
            switch shape {
            case let .circle(center, _): return (center.longitude, center.latitude)
            case let .polygons(members):
                guard let first = members.first?.shell.first else { return (0, 0) }
                return (first.longitude, first.latitude)
            case let .corridor(lines, _):
                guard let first = lines.first?.first else { return (0, 0) }
                return (first.longitude, first.latitude)
            }
        }
        return point(shape)
    }

    /// Indices of `points` (lon, lat) sorted by their Morton code over the points' extent.
    static func spatialOrder(points: [(Double, Double)]) -> [Int] {
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        for (x, y) in points where x.isFinite && y.isFinite {
            minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
        }
        guard minX.isFinite else { return Array(points.indices) }
        let sx = maxX > minX ? 65535 / (maxX - minX) : 0, sy = maxY > minY ? 65535 / (maxY - minY) : 0
        // 32-bit Morton code above the shape index, sorted by the code (stable: ties keep
        // index order).
        var keys: [UInt64] = points.indices.map { i in
            let (x, y) = points[i]
            guard x.isFinite, y.isFinite else { return (UInt64(UInt32.max) << 32) | UInt64(i) }
            let code = spread16(UInt32((x - minX) * sx)) | (spread16(UInt32((y - minY) * sy)) << 1)
            return (code << 32) | UInt64(i)
        }
        radixSortHigh32(&keys)
        return keys.map { Int(UInt32(truncatingIfNeeded: $0)) }
    }

    mutating func addCircle(center: Coordinate, radiusMeters: Double) {
        let r = radiusMeters.isFinite ? max(0, radiusMeters) : 0
        let lat = center.latitude.isFinite ? center.latitude : 0
        let lon = center.longitude.isFinite ? Geodesy.normalizedLongitude(center.longitude) : 0
        let k = Geodesy.metersPerDegree(atLatitude: lat)
        let dLat = r / k.latitude * 1.01 + 1e-9
        let poleward = min(89.999, abs(lat) + dLat)
        let kPole = Geodesy.metersPerDegree(atLatitude: poleward)
        let dLon = min(180, r / max(kPole.longitude, 1) * 1.01 + 1e-9)
        fences.append(FenceRecord(centerLat: lat, centerLon: lon,
                                  minX: -Float(dLon).nextUp, maxX: Float(dLon).nextUp, minY: -Float(dLat).nextUp, maxY: Float(dLat).nextUp,
                                  inner: Float(r), outer: Float(r), polygon: UInt32.max))
    }

    /// A corridor: its lines unwrapped like rings (each continuous, each shifted by 360°
    /// multiples to lie near the first), stored open after the half-width pair, with a
    /// bounding box grown by the half width and the strip index of a long polygon.
    mutating func addCorridor(_ lines: [[Coordinate]], widthMeters: Double, scratch: inout Scratch) {
        let h = widthMeters.isFinite ? max(0, widthMeters / 2) : 0
        var points: [[(x: Double, y: Double)]] = []
        var referenceLon: Double?
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        for line in lines {
            var out: [(x: Double, y: Double)] = []
            var previousLon = 0.0, lon = 0.0
            for p in line where p.latitude.isFinite && p.longitude.isFinite {
                if out.isEmpty {
                    lon = p.longitude
                    if let reference = referenceLon { lon += 360 * ((reference - lon + 180) / 360).rounded(.down) }
                } else {
                    lon += Geodesy.longitudeDelta(previousLon, p.longitude)
                }
                previousLon = p.longitude
                out.append((lon, p.latitude))
                minX = min(minX, lon); maxX = max(maxX, lon)
                minY = min(minY, p.latitude); maxY = max(maxY, p.latitude)
            }
            guard !out.isEmpty else { continue }
            if referenceLon == nil { referenceLon = out[0].x }
            points.append(out)
        }
        let start = vertices.count / 2
        guard !points.isEmpty else {
            fences.append(FenceRecord(centerLat: 0, centerLon: 0, minX: 0, maxX: 0, minY: 0, maxY: 0,
                                      inner: -0, outer: 0, polygon: UInt32(polygons.count) | Self.corridorBit))
            vertices += [Float(h), .nan]
            polygons.append(PolygonRecord(vertexStart: UInt32(start), vertexEnd: UInt32(vertices.count / 2), stripStart: 0, stripCount: 0, stripLat0: 0, stripsPerDegree: 0))
            return
        }
        let cx0 = (minX + maxX) / 2, cy = (minY + maxY) / 2
        let k = Geodesy.metersPerDegree(atLatitude: cy)
        var farthest2 = 0.0
        vertices += [Float(h), .nan]
        for line in points {
            for p in line {
                let x = Float(p.x - cx0), y = Float(p.y - cy)
                vertices += [x, y]
                let ex = Double(x) * k.longitude, ny = Double(y) * k.latitude
                farthest2 = max(farthest2, ex * ex + ny * ny)
            }
            vertices += [.nan, .nan]
        }
        let end = vertices.count / 2
        // The box holds everything within h of the lines (degrees of longitude measured where
        // they are shortest).
        let dLat = h / k.latitude * 1.01 + 1e-9
        let poleward = min(89.999, max(abs(minY), abs(maxY)) + dLat)
        let dLon = min(180, h / max(Geodesy.metersPerDegree(atLatitude: poleward).longitude, 1) * 1.01 + 1e-9)
        let boxMinX = Float(minX - cx0 - dLon).nextDown, boxMaxX = Float(maxX - cx0 + dLon).nextUp
        let boxMinY = Float(minY - cy - dLat).nextDown, boxMaxY = Float(maxY - cy + dLat).nextUp
        var record = PolygonRecord(vertexStart: UInt32(start), vertexEnd: UInt32(end), stripStart: 0, stripCount: 0, stripLat0: 0, stripsPerDegree: 0)
        let vertexCount = end - start
        if vertexCount > Self.stripThreshold, vertexCount <= Int(UInt16.max), boxMaxY > boxMinY {
            buildStrips(&record, minY: boxMinY, maxY: boxMaxY, scratch: &scratch)
        }
        let extentRadians = (maxY - minY) * Geodesy.radiansPerDegree
        let margin = 1e-3 + 2 * extentRadians * (abs(tan(cy * Geodesy.radiansPerDegree)) + 1)
        let polygonNumber = polygons.count
        polygons.append(record)
        // The centre's side is not known: inner 0 promises nothing.
        fences.append(FenceRecord(centerLat: cy, centerLon: Geodesy.normalizedLongitude(cx0),
                                  minX: boxMinX, maxX: boxMaxX, minY: boxMinY, maxY: boxMaxY,
                                  inner: -0, outer: Float(farthest2.squareRoot() * (1 + margin) + h * 1.01 + 0.01).nextUp,
                                  polygon: UInt32(polygonNumber) | Self.corridorBit))
    }

    /// Reusable buffers for building polygons (unwrapped vertices and ring ends).
    struct Scratch {
        var xs: [Double] = []
        var ys: [Double] = []
        var ringEnds: [Int] = []
        /// Per kept ring: whether it begins a polygon (a shell) rather than a hole.
        var memberStarts: [Bool] = []
        var counts: [UInt32] = []
        var fill: [UInt32] = []
        var ranges: [Int32] = []
    }

    mutating func addPolygons(_ members: [PolygonRings], scratch: inout Scratch) {
        // Unwrap longitudes: consecutive vertices differ by at most 180°, each ring is shifted
        // by 360° multiples to lie near the first ring.
        var total = 0
        for member in members {
            total += member.shell.count
            for hole in member.holes { total += hole.count }
        }
        if scratch.xs.count < total {
            scratch.xs = [Double](repeating: 0, count: 2 * total)
            scratch.ys = scratch.xs
        }
        // Taken out of `scratch` so that each is uniquely referenced while written through.
        var xs = scratch.xs, ys = scratch.ys, ringEnds = scratch.ringEnds, memberStarts = scratch.memberStarts
        scratch.xs = []; scratch.ys = []; scratch.ringEnds = []; scratch.memberStarts = []
        defer { scratch.xs = xs; scratch.ys = ys; scratch.ringEnds = ringEnds; scratch.memberStarts = memberStarts }
        ringEnds.removeAll(keepingCapacity: true)
        memberStarts.removeAll(keepingCapacity: true)
        var used = 0
        var referenceLon: Double?
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        xs.withUnsafeMutableBufferPointer { xb in
            ys.withUnsafeMutableBufferPointer { yb in
                func addRing(_ ring: [Coordinate]) {
                    let ringStart = used
                    var rMinX = Double.infinity, rMaxX = -Double.infinity, rMinY = Double.infinity, rMaxY = -Double.infinity
                    ring.withUnsafeBufferPointer { r in
                        var previousLon = 0.0
                        var lon = 0.0
                        // Finite positions only (x × 0 is NaN for an infinity or a NaN: cheaper
                        // than two `isFinite`).
                        for p in r where p.latitude * 0 + p.longitude * 0 == 0 {
                            if used == ringStart {
                                lon = p.longitude
                                if let reference = referenceLon { lon += 360 * ((reference - lon + 180) / 360).rounded(.down) }
                            } else {
                                lon += Geodesy.longitudeDelta(previousLon, p.longitude)
                            }
                            previousLon = p.longitude
                            xb[used] = lon
                            yb[used] = p.latitude
                            used += 1
                            // Selects rather than `min`/`max`, whose NaN rules cost more.
                            rMinX = lon < rMinX ? lon : rMinX; rMaxX = lon > rMaxX ? lon : rMaxX
                            rMinY = p.latitude < rMinY ? p.latitude : rMinY; rMaxY = p.latitude > rMaxY ? p.latitude : rMaxY
                        }
                    }
                    var n = used - ringStart
                    // The closing vertex (equal to the first) changes no extreme.
                    if n > 1, xb[ringStart + n - 1] == xb[ringStart], yb[ringStart + n - 1] == yb[ringStart] {
                        used -= 1; n -= 1
                    }
                    if n < 3 {
                        used = ringStart
                        return
                    }
                    if referenceLon == nil { referenceLon = xb[ringStart] }
                    minX = min(minX, rMinX); maxX = max(maxX, rMaxX)
                    minY = min(minY, rMinY); maxY = max(maxY, rMaxY)
                    ringEnds.append(used)
                }
                for member in members {
                    let before = ringEnds.count
                    addRing(member.shell)
                    for hole in member.holes { addRing(hole) }
                    for r in before..<ringEnds.count { memberStarts.append(r == before) }
                }
            }
        }
        guard !ringEnds.isEmpty else {
            // Nothing usable: an empty fence far from everything (validation reports it).
            fences.append(FenceRecord(centerLat: 0, centerLon: 0, minX: 0, maxX: 0, minY: 0, maxY: 0,
                                      inner: -0, outer: 0, polygon: UInt32(polygons.count)))
            polygons.append(PolygonRecord(vertexStart: UInt32(vertices.count / 2), vertexEnd: UInt32(vertices.count / 2), stripStart: 0, stripCount: 0, stripLat0: 0, stripsPerDegree: 0))
            return
        }
        let cx0 = (minX + maxX) / 2, cy = (minY + maxY) / 2
        let cx = Geodesy.normalizedLongitude(cx0)
        let k = Geodesy.metersPerDegree(atLatitude: cy)
        let start = vertices.count / 2
        var farthest2 = 0.0
        // Nearest edge to the centre (as `EdgeAccumulator` measures it).
        var nearest2 = Double.infinity
        // A fence split at the antimeridian: its rings without the edges its parts share there.
        let seamless = ringEnds.count < 2 ? nil : xs.withUnsafeBufferPointer { xb in
            ys.withUnsafeBufferPointer { yb in Self.seamlessPolylines(xs: xb, ys: yb, ringEnds: ringEnds, memberStarts: memberStarts, minX: minX, maxX: maxX) }
        }
        if let seamless {
            var previous: (x: Float, y: Float)?
            for j in stride(from: 0, to: seamless.count, by: 2) {
                guard !seamless[j].isNaN else {
                    // The separators' signs (piece break, new polygon) carry over.
                    vertices += [seamless[j].sign == .minus ? -Float.nan : .nan, seamless[j + 1].sign == .minus ? -Float.nan : .nan]
                    previous = nil
                    continue
                }
                let x = Float(seamless[j] - cx0), y = Float(seamless[j + 1] - cy)
                vertices += [x, y]
                let ex = Double(x) * k.longitude, ny = Double(y) * k.latitude
                farthest2 = max(farthest2, ex * ex + ny * ny)
                if let p = previous { nearest2 = Self.nearerOriginDistance2(nearest2, p.x, p.y, x, y, k) }
                previous = (x, y)
            }
        }
        if seamless == nil {
            // Float offsets from the centre, each ring closed and followed by a NaN separator;
            // the farthest vertex from the centre on the way.
            vertices.append(contentsOf: repeatElement(0, count: 2 * (used + 2 * ringEnds.count)))
            vertices.withUnsafeMutableBufferPointer { v in
                xs.withUnsafeBufferPointer { xb in
                    ys.withUnsafeBufferPointer { yb in
                        var o = 2 * start
                        var ringStart = 0
                        for (r, ringEnd) in ringEnds.enumerated() {
                            // The previous vertex is carried in registers: reading back the two
                            // 4-byte stores as one 8-byte load stalls on store forwarding.
                            let firstX = Float(xb[ringStart] - cx0), firstY = Float(yb[ringStart] - cy)
                            var previousX = firstX, previousY = firstY
                            for i in ringStart..<ringEnd {
                                let x = Float(xb[i] - cx0), y = Float(yb[i] - cy)
                                v[o] = x
                                v[o + 1] = y
                                o += 2
                                let ex = Double(x) * k.longitude, ny = Double(y) * k.latitude
                                let distance2 = ex * ex + ny * ny
                                farthest2 = distance2 > farthest2 ? distance2 : farthest2
                                if i > ringStart { nearest2 = Self.nearerOriginDistance2(nearest2, previousX, previousY, x, y, k) }
                                previousX = x
                                previousY = y
                            }
                            v[o] = firstX
                            v[o + 1] = firstY
                            nearest2 = Self.nearerOriginDistance2(nearest2, previousX, previousY, firstX, firstY, k)
                            o += 2
                            // The separator; a negative NaN as its y: the next ring begins a polygon.
                            v[o] = .nan
                            v[o + 1] = r + 1 < memberStarts.count && memberStarts[r + 1] ? -.nan : .nan
                            o += 2
                            ringStart = ringEnd
                        }
                    }
                }
            }
        }
        let end = vertices.count / 2
        var record = PolygonRecord(vertexStart: UInt32(start), vertexEnd: UInt32(end), stripStart: 0, stripCount: 0, stripLat0: 0, stripsPerDegree: 0)
        let boxMinX = Float(minX - cx0).nextDown, boxMaxX = Float(maxX - cx0).nextUp
        let boxMinY = Float(minY - cy).nextDown, boxMaxY = Float(maxY - cy).nextUp
        let vertexCount = end - start
        // Radii about the centre, in the centre's local metric, with a safety margin for the
        // metric's variation across the fence.
        let extentRadians = (maxY - minY) * Geodesy.radiansPerDegree
        let margin = 1e-3 + 2 * extentRadians * (abs(tan(cy * Geodesy.radiansPerDegree)) + 1)
        // The first ring's vertex count; the other rings (holes, further members) are scanned
        // whole by the angular index, so they must be few.
        let shellCount = ringEnds[0]
        if seamless == nil, vertexCount > Self.stripThreshold, vertexCount - (shellCount + 2) <= Self.sectorOtherVertices,
           maxY - minY < 1, maxX - minX < 1,
           buildSectors(&record, shellCount: shellCount, metric: k, margin: margin) {
            // First ring star-shaped around the centre: angular index.
        } else if vertexCount > Self.stripThreshold, vertexCount <= Int(UInt16.max), boxMaxY > boxMinY {
            buildStrips(&record, minY: boxMinY, maxY: boxMaxY, scratch: &scratch)
        }
        let polygonNumber = polygons.count
        polygons.append(record)
        // A sector-indexed polygon has its centre strictly inside its first ring: with no
        // other ring, only the distance is needed.
        let sectorAlone = record.stripCount == UInt32.max && vertexCount == shellCount + 2
        var centerInside = true
        if !sectorAlone {
            let probe = edgeScan(polygon: polygonNumber, px: 0, py: 0, kx: k.longitude, ky: k.latitude, limit: 0, pip: true)
            centerInside = probe.inside && !probe.onBoundary
        }
        let farthest = farthest2.squareRoot()
        let nearestEdge = max(0, nearest2.squareRoot() * (1 - margin) - 0.01)
        fences.append(FenceRecord(centerLat: cy, centerLon: cx, minX: boxMinX, maxX: boxMaxX, minY: boxMinY, maxY: boxMaxY,
                                  inner: centerInside ? max(0, Float(nearestEdge).nextDown) : -Float(nearestEdge),
                                  outer: Float(farthest * (1 + margin) + 0.01).nextUp, polygon: UInt32(polygonNumber)))
    }

    /// `min(best, d²)`, where d is the distance in metres from the centre to the edge from
    /// vertex (`ax`, `ay`) to (`bx`, `by`), with d² computed exactly as `EdgeAccumulator.edge`
    /// does for a point at the centre. An edge whose line is already no nearer than `best`
    /// (the segment is never nearer than its line) is skipped before the division: most edges
    /// of a ring, since `best` is soon close to the minimum.
    @inline(__always)
    static func nearerOriginDistance2(_ best: Double, _ fax: Float, _ fay: Float, _ fbx: Float, _ fby: Float,
                                      _ k: (longitude: Double, latitude: Double)) -> Double {
        let ax = Double(fax), ay = Double(fay), bx = Double(fbx), by = Double(fby)
        let x0 = (ax - 0) * k.longitude, y0 = (ay - 0) * k.latitude
        let dx = (bx - ax) * k.longitude, dy = (by - ay) * k.latitude
        let len2 = dx * dx + dy * dy
        // cross² / len2 is the squared distance to the line; the factor covers rounding (and
        // the result only feeds a radius shrunk by at least 0.1 %). False for len2 = 0 or best
        // = +infinity.
        let cross = x0 * dy - y0 * dx
        if cross * cross > best * len2 * (1 + 1e-9) { return best }
        var t = len2 > 0 ? -(x0 * dx + y0 * dy) / len2 : 0
        t = t < 0 ? 0 : (t > 1 ? 1 : t)
        let cx = x0 + t * dx, cy = y0 + t * dy
        let distance2 = cx * cx + cy * cy
        return distance2 < best ? distance2 : best
    }

    /// Asks the kernel to back the array's storage with transparent huge pages (2 MiB) where
    /// it spans whole ones: a large index is read at random, and with 4 KiB pages nearly
    /// every fence touched is a TLB miss (and the build takes one page fault per 4 KiB). A
    /// hint to the memory system only: no effect on any result; ignored where unsupported.
    /// Call it after reserving capacity and before writing the elements.
    static func adviseHugePages<T>(_ array: inout ContiguousArray<T>) {
#if canImport(Glibc)
        let bytes = array.capacity * MemoryLayout<T>.stride
        let huge = 2 << 20
        guard bytes >= 2 * huge else { return }
        array.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            let address = Int(bitPattern: UnsafeMutableRawPointer(base))
            let start = (address + huge - 1) & ~(huge - 1), end = (address + bytes) & ~(huge - 1)
            guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
            _ = madvise(pointer, end - start, MADV_HUGEPAGE)
        }
#endif
    }

    /// A copy with capacity equal to its count.
    static func exact<T>(_ array: ContiguousArray<T>) -> ContiguousArray<T> {
        ContiguousArray(unsafeUninitializedCapacity: array.count) { buffer, count in
            array.withUnsafeBufferPointer { source in
                for i in 0..<source.count { (buffer.baseAddress! + i).initialize(to: source[i]) }
            }
            count = array.count
        }
    }

    /// Marks a single-ring polygon whose vertices go round the centre in strictly monotone
    /// angle (so every ray from the centre crosses exactly one edge). Angles are pseudo-angles
    /// (`pseudoAngle`: a strictly monotone function of the angle, 4 per turn, no trigonometry)
    /// in the frame (x·s, y) with s = ±(metres per degree of longitude / of latitude) at the
    /// centre; the sign makes every such ring counter-clockwise. Nothing is stored but s (in
    /// `stripsPerDegree`): the query computes each vertex angle from the vertex with
    /// `vertexAngle`, exactly as checked here (an array of angles would add 4 bytes per vertex,
    /// a fifth of the index, and a cache line per scan).
    ///
    /// The first ring has `n` vertices (stored closed and followed by a separator: vertex
    /// `start + n` repeats the first). Other rings after it (holes, further members) are
    /// scanned whole by the query, but only for a point within their reach from the centre:
    /// the farthest of their vertices (the farthest point of an edge is a vertex), widened by
    /// `margin` (the metric's variation across the fence) and 1 cm, stored in `stripLat0`.
    private func buildSectors(_ record: inout PolygonRecord, shellCount n: Int, metric k: (longitude: Double, latitude: Double),
                              margin: Double) -> Bool {
        let start = Int(record.vertexStart), end = Int(record.vertexEnd)
        guard n >= 3, start + n + 2 <= end else { return false }
        let raw = k.longitude / k.latitude
        let checked: Double? = vertices.withUnsafeBufferPointer { v in
            // Orientation from the sign of the shoelace sum (x scaled by a positive factor keeps
            // it): mirroring x turns a clockwise ring counter-clockwise. A ring that winds round
            // the centre once in monotone angle is simple, so its area has the winding's sign;
            // any other ring fails the check below in either frame.
            var area2 = 0.0
            for i in 0..<n {
                let ax = Double(v[2 * (start + i)]), ay = Double(v[2 * (start + i) + 1])
                let bx = Double(v[2 * (start + i + 1)]), by = Double(v[2 * (start + i + 1) + 1])
                area2 += ax * by - bx * ay
            }
            let scale = Double(Float(area2 < 0 ? -raw : raw))
            // With the stored scale, as the query computes them: from the first vertex's angle,
            // unwrapped into [first, first + 4), strictly increasing (by 2e-6 at least, so the
            // centre is strictly inside), each edge under a half turn, one turn in total.
            let first = Self.vertexAngle(v, start, scale)
            var last = first
            for i in 1...n {
                let a = Self.unwrappedAngle(v, start, i, n, scale, first: first)
                guard a - last >= 2e-6, a - last < 2 - 1e-6 else { return nil }
                last = a
            }
            return scale
        }
        guard let scale = checked else { return false }
        var reach2 = 0.0
        vertices.withUnsafeBufferPointer { v in
            for i in (start + n + 2)..<end where !v[2 * i].isNaN {
                let east = Double(v[2 * i]) * k.longitude, north = Double(v[2 * i + 1]) * k.latitude
                reach2 = max(reach2, east * east + north * north)
            }
        }
        record.stripStart = UInt32(n)
        record.stripCount = UInt32.max
        record.stripLat0 = reach2 > 0 ? Float(reach2.squareRoot() * (1 + margin) + 0.01).nextUp : 0
        record.stripsPerDegree = Float(scale)
        return true
    }

    /// The pseudo-angle of vertex `i` seen from the centre in the frame (x·`scale`, y).
    @inline(__always)
    static func vertexAngle(_ v: UnsafeBufferPointer<Float>, _ i: Int, _ scale: Double) -> Double {
        pseudoAngle(Double(v[2 * i]) * scale, Double(v[2 * i + 1]))
    }

    /// The angle of vertex `start + i` of a sector-indexed ring of `n` vertices, unwrapped
    /// into [`first`, `first` + 4) (`first`: vertex 0's angle); vertex `n`, the closing copy of
    /// vertex 0, at `first` + 4. The one definition the build checks and the query searches.
    @inline(__always)
    static func unwrappedAngle(_ v: UnsafeBufferPointer<Float>, _ start: Int, _ i: Int, _ n: Int, _ scale: Double,
                               first: Double) -> Double {
        if i == n { return first + 4 }
        let p = vertexAngle(v, start + i, scale)
        return p < first ? p + 4 : p
    }

    /// A strictly increasing function of the angle of (x, y) from the +x axis, in [0, 4)
    /// (one per quarter turn; the "diamond angle"), exact at the axes: p(−x, −y) = p(x, y) + 2
    /// (mod 4) and p(−x, y) = 2 − p(x, y) (mod 4). Its rate is between 1/2 and 1 per radian.
    @inline(__always)
    static func pseudoAngle(_ x: Double, _ y: Double) -> Double {
        if y >= 0 {
            return x >= 0 ? (y == 0 ? 0 : y / (x + y)) : 1 - x / (y - x)
        }
        return x < 0 ? 2 - y / (-x - y) : 3 + x / (x - y)
    }

    private mutating func buildStrips(_ record: inout PolygonRecord, minY: Float, maxY: Float, scratch: inout Scratch) {
        let start = Int(record.vertexStart), end = Int(record.vertexEnd)
        let edgeCount = end - start - 1
        let strips = max(2, min(4096, edgeCount / Self.edgesPerStrip))
        let perDegree = Float(Double(strips) / Double(maxY - minY))
        scratch.counts.removeAll(keepingCapacity: true)
        scratch.counts.append(contentsOf: repeatElement(0, count: strips + 1))
        scratch.ranges.removeAll(keepingCapacity: true)
        vertices.withUnsafeBufferPointer { v in
            for e in 0..<edgeCount {
                let ay = v[2 * (start + e) + 1], by = v[2 * (start + e + 1) + 1]
                if ay.isNaN || by.isNaN {
                    scratch.ranges.append(1)
                    scratch.ranges.append(0)
                    continue
                }
                let lo = max(0, min(strips - 1, Int(((min(ay, by) - minY) * perDegree).rounded(.down))))
                let hi = max(0, min(strips - 1, Int(((max(ay, by) - minY) * perDegree).rounded(.down))))
                scratch.ranges.append(Int32(lo))
                scratch.ranges.append(Int32(hi))
                for s in lo...hi { scratch.counts[s + 1] += 1 }
            }
        }
        for s in 0..<strips { scratch.counts[s + 1] += scratch.counts[s] }
        let base = stripEdges.count
        let total = Int(scratch.counts[strips])
        stripEdges.append(contentsOf: repeatElement(0, count: total))
        scratch.fill.removeAll(keepingCapacity: true)
        scratch.fill.append(contentsOf: scratch.counts)
        stripEdges.withUnsafeMutableBufferPointer { out in
            for e in 0..<edgeCount {
                let lo = Int(scratch.ranges[2 * e]), hi = Int(scratch.ranges[2 * e + 1])
                if lo > hi { continue }
                for s in lo...hi {
                    out[base + Int(scratch.fill[s])] = UInt16(e)
                    scratch.fill[s] += 1
                }
            }
        }
        record.stripStart = UInt32(stripStarts.count)
        record.stripCount = UInt32(strips)
        record.stripLat0 = minY
        record.stripsPerDegree = perDegree
        for s in 0...strips { stripStarts.append(UInt32(base) + scratch.counts[s]) }
    }

    mutating func buildGrid() {
        let n = count
        guard n > 0 else { return }
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        var meanHeight = 0.0
        for f in 0..<n {
            let r = fences[f]
            minX = min(minX, r.centerLon + Double(r.minX))
            maxX = max(maxX, r.centerLon + Double(r.maxX))
            minY = min(minY, r.centerLat + Double(r.minY))
            maxY = max(maxY, r.centerLat + Double(r.maxY))
            meanHeight += Double(r.maxY - r.minY)
        }
        meanHeight /= Double(n)
        let k = Geodesy.metersPerDegree(atLatitude: max(-80, min(80, (minY + maxY) / 2)))
        let widthMeters = max(1, (maxX - minX) * k.longitude)
        let heightMeters = max(1, (maxY - minY) * k.latitude)
        // Cells: about two per fence, but not much smaller than the typical fence, so that a
        // fence is listed in few cells.
        let meanSide = meanHeight * k.latitude
        var side = max((widthMeters * heightMeters / Double(min(2 * n, 1 << 22))).squareRoot(), 1.2 * meanSide, 1)
        var plainEntries = 0
        while true {
            columns = max(1, min(1 << 16, Int((widthMeters / side).rounded(.up))))
            rows = max(1, min(1 << 16, Int((heightMeters / side).rounded(.up))))
            cellLonDegrees = (maxX - minX) / Double(columns) * (1 + 1e-12) + 1e-12
            cellLatDegrees = (maxY - minY) / Double(rows) * (1 + 1e-12) + 1e-12
            gridLon0 = minX
            gridLat0 = minY
            // Keep the total number of cell entries bounded (big fences cover many cells).
            plainEntries = 0
            for f in 0..<n { plainEntries += cellRange(f).count }
            if plainEntries <= 4 * n + 1024 || columns * rows == 1 { break }
            side *= (Double(plainEntries) / Double(3 * n)).squareRoot()
        }
        cellMargin = 0
        // Extra entries allowed per fence on average: one for circles (≤ 150 B each, the
        // memory target), three for polygons, whose vertices dwarf 20-byte entries (with three,
        // a 0.3-cell margin instead of 0.1 in the benchmark mix: +4–5 % batch queries in
        // best-of-20 runs, +33 B per fence).
        let budget = n + 2 * polygons.count
        for margin in Self.cellMargins {
            var entries = 0
            for f in 0..<n { entries += cellRange(f, marginLon: margin * cellLonDegrees, marginLat: margin * cellLatDegrees).count }
            if entries <= plainEntries + budget { cellMargin = margin; break }
        }
        var counts = [UInt32](repeating: 0, count: columns * rows + 1)
        let marginLon = cellMargin * cellLonDegrees, marginLat = cellMargin * cellLatDegrees
        for f in 0..<n {
            let r = cellRange(f, marginLon: marginLon, marginLat: marginLat)
            for j in r.rows { for i in r.columns { counts[j * columns + i + 1] += 1 } }
        }
        for c in 0..<(columns * rows) { counts[c + 1] += counts[c] }
        cellStarts = ContiguousArray(counts)
        cellFences = []
        cellFences.reserveCapacity(Int(counts[columns * rows]))
        Self.adviseHugePages(&cellFences)
        cellFences.append(contentsOf: repeatElement(CellEntry(minLon: 0, minLat: 0, maxLon: 0, maxLat: 0, fence: 0), count: Int(counts[columns * rows])))
        var fill = counts
        for f in 0..<n {
            let r = cellRange(f, marginLon: marginLon, marginLat: marginLat)
            let record = fences[f]
            let entry = CellEntry(minLon: Float(record.centerLon + Double(record.minX)).nextDown,
                                  minLat: Float(record.centerLat + Double(record.minY)).nextDown,
                                  maxLon: Float(record.centerLon + Double(record.maxX)).nextUp,
                                  maxLat: Float(record.centerLat + Double(record.maxY)).nextUp,
                                  fence: UInt32(f))
            for j in r.rows {
                for i in r.columns {
                    cellFences[Int(fill[j * columns + i])] = entry
                    fill[j * columns + i] += 1
                }
            }
        }
    }

    /// The cells fence `f`'s bounding box, grown by the margins (degrees), overlaps.
    private func cellRange(_ f: Int, marginLon: Double = 0, marginLat: Double = 0) -> (columns: ClosedRange<Int>, rows: ClosedRange<Int>, count: Int) {
        let r = fences[f]
        let x0 = cellColumn(r.centerLon + Double(r.minX) - marginLon), x1 = cellColumn(r.centerLon + Double(r.maxX) + marginLon)
        let y0 = cellRow(r.centerLat + Double(r.minY) - marginLat), y1 = cellRow(r.centerLat + Double(r.maxY) + marginLat)
        return (x0...x1, y0...y1, (x1 - x0 + 1) * (y1 - y0 + 1))
    }

    @inline(__always)
    func cellColumn(_ lon: Double) -> Int {
        let v = (lon - gridLon0) / cellLonDegrees
        return v < 0 ? 0 : (v >= Double(columns) ? columns - 1 : Int(v))
    }

    @inline(__always)
    func cellRow(_ lat: Double) -> Int {
        let v = (lat - gridLat0) / cellLatDegrees
        return v < 0 ? 0 : (v >= Double(rows) ? rows - 1 : Int(v))
    }
}
