#if canImport(Glibc)
import Glibc
#endif

/// One polygon fence's vertex range and optional latitude-strip edge index.
struct PolygonRecord: Sendable {
    /// Vertices `vertexStart..<vertexEnd` in `FenceStore.vertices` (x, y pairs): each ring is
    /// stored closed and followed by a NaN separator, so edge `i` joins vertex `i` and `i + 1`.
    var vertexStart: UInt32
    var vertexEnd: UInt32
    /// First entry in `FenceStore.stripStarts`; `stripCount == 0` means no edge index.
    var stripStart: UInt32
    var stripCount: UInt32
    /// Latitude offset of the first strip's lower edge and strips per degree.
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
    /// Index into `FenceStore.polygons`, or `UInt32.max` for a circle (radius = `outer`).
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
    /// Sector-indexed polygons (`stripCount == UInt32.max`): unwrapped vertex angles, n + 1
    /// per polygon starting at `stripStart`.
    var angles: ContiguousArray<Float> = []

    // The grid.
    var gridLon0 = 0.0, gridLat0 = 0.0
    var cellLonDegrees = 1.0, cellLatDegrees = 1.0
    var columns = 0, rows = 0
    var cellStarts: ContiguousArray<UInt32> = [0]
    var cellFences: ContiguousArray<CellEntry> = []

    /// Polygons with more vertices than this (and fewer than 65,536) get a strip edge index.
    static let stripThreshold = 24
    /// Edges per strip aimed for.
    static let edgesPerStrip = 4
    /// A fence is listed in every cell within this fraction of a cell (per axis) of its
    /// bounding box, so the nearest-boundary search rarely needs the ring of cells around the
    /// point's cell: any fence not listed there is at least this margin farther away. The
    /// largest of `cellMargins` that keeps the cell entries within budget is used.
    var cellMargin = 0.0
    static let cellMargins = [0.3, 0.2, 0.1]

    /// Allocated bytes (capacities, not counts).
    var bytes: Int {
        fences.capacity * MemoryLayout<FenceRecord>.stride + internalIDs.capacity * 4
            + polygons.capacity * MemoryLayout<PolygonRecord>.stride
            + vertices.capacity * 4 + angles.capacity * 4 + stripStarts.capacity * 4 + stripEdges.capacity * 2
            + cellStarts.capacity * 4 + cellFences.capacity * MemoryLayout<CellEntry>.stride
    }

    var count: Int { fences.count }
}

// MARK: - Building

extension FenceStore {
    init(shapes: [FenceShape]) {
        fences.reserveCapacity(shapes.count)
        // Reserve the vertex storage once (closing vertex and separator per ring).
        var floats = 0
        var polygonCount = 0
        for shape in shapes {
            guard case let .polygons(members) = shape else { continue }
            polygonCount += 1
            for member in members {
                floats += 2 * (member.shell.count + 2)
                for hole in member.holes { floats += 2 * (hole.count + 2) }
            }
        }
        vertices.reserveCapacity(floats)
        polygons.reserveCapacity(polygonCount)
        // Store fences in Z-order of their position so that neighbours share cache lines.
        let order = Self.spatialOrder(shapes)
        var scratch = Scratch()
        internalIDs = ContiguousArray(repeating: 0, count: shapes.count)
        for external in order {
            internalIDs[external] = UInt32(fences.count)
            switch shapes[external] {
            case let .circle(center, radius):
                addCircle(center: center, radiusMeters: radius)
            case let .polygons(members):
                addPolygons(members, scratch: &scratch)
            }
            fences[fences.count - 1].external = UInt32(external)
        }
        buildGrid()
        // Drop the growth slack of the arrays built by appending.
        stripEdges = Self.exact(stripEdges)
        stripStarts = Self.exact(stripStarts)
        angles = Self.exact(angles)
    }

    /// Shape indices sorted by the Morton code of a representative point.
    static func spatialOrder(_ shapes: [FenceShape]) -> [Int] {
        func point(_ shape: FenceShape) -> (Double, Double) {
            switch shape {
            case let .circle(center, _): return (center.longitude, center.latitude)
            case let .polygons(members):
                guard let first = members.first?.shell.first else { return (0, 0) }
                return (first.longitude, first.latitude)
            }
        }
        let points = shapes.map(point)
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        for (x, y) in points where x.isFinite && y.isFinite {
            minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
        }
        guard minX.isFinite else { return Array(shapes.indices) }
        let sx = maxX > minX ? 65535 / (maxX - minX) : 0, sy = maxY > minY ? 65535 / (maxY - minY) : 0
        func spread(_ v: UInt32) -> UInt64 {
            var x = UInt64(v) & 0xFFFF
            x = (x | (x << 8)) & 0x00FF_00FF
            x = (x | (x << 4)) & 0x0F0F_0F0F
            x = (x | (x << 2)) & 0x3333_3333
            x = (x | (x << 1)) & 0x5555_5555
            return x
        }
        let keys: [UInt64] = points.map { (x, y) in
            guard x.isFinite, y.isFinite else { return UInt64.max }
            return spread(UInt32((x - minX) * sx)) | (spread(UInt32((y - minY) * sy)) << 1)
        }
        return shapes.indices.sorted { keys[$0] != keys[$1] ? keys[$0] < keys[$1] : $0 < $1 }
    }

    private mutating func addCircle(center: Coordinate, radiusMeters: Double) {
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

    /// Reusable buffers for building polygons (unwrapped vertices and ring ends).
    struct Scratch {
        var xs: [Double] = []
        var ys: [Double] = []
        var ringEnds: [Int] = []
        var counts: [UInt32] = []
        var fill: [UInt32] = []
        var ranges: [Int32] = []
        var angles: [Double] = []
        var unwrapped: [Float] = []
    }

    private mutating func addPolygons(_ members: [PolygonRings], scratch: inout Scratch) {
        // Unwrap longitudes: consecutive vertices differ by at most 180°, each ring is shifted
        // by 360° multiples to lie near the first ring.
        scratch.xs.removeAll(keepingCapacity: true)
        scratch.ys.removeAll(keepingCapacity: true)
        scratch.ringEnds.removeAll(keepingCapacity: true)
        var referenceLon: Double?
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        func addRing(_ ring: [Coordinate], _ scratch: inout Scratch) {
            let ringStart = scratch.xs.count
            var previousLon = 0.0
            var lon = 0.0
            for p in ring where p.latitude.isFinite && p.longitude.isFinite {
                if scratch.xs.count == ringStart {
                    lon = p.longitude
                    if let reference = referenceLon { lon += 360 * ((reference - lon + 180) / 360).rounded(.down) }
                } else {
                    lon += Geodesy.longitudeDelta(previousLon, p.longitude)
                }
                previousLon = p.longitude
                scratch.xs.append(lon)
                scratch.ys.append(p.latitude)
            }
            var n = scratch.xs.count - ringStart
            if n > 1, scratch.xs[ringStart + n - 1] == scratch.xs[ringStart], scratch.ys[ringStart + n - 1] == scratch.ys[ringStart] {
                scratch.xs.removeLast(); scratch.ys.removeLast(); n -= 1
            }
            if n < 3 {
                scratch.xs.removeLast(n); scratch.ys.removeLast(n)
                return
            }
            if referenceLon == nil { referenceLon = scratch.xs[ringStart] }
            for k in ringStart..<scratch.xs.count {
                minX = min(minX, scratch.xs[k]); maxX = max(maxX, scratch.xs[k])
                minY = min(minY, scratch.ys[k]); maxY = max(maxY, scratch.ys[k])
            }
            scratch.ringEnds.append(scratch.xs.count)
        }
        for member in members {
            addRing(member.shell, &scratch)
            for hole in member.holes { addRing(hole, &scratch) }
        }
        guard !scratch.ringEnds.isEmpty else {
            // Nothing usable: an empty fence far from everything (validation reports it).
            fences.append(FenceRecord(centerLat: 0, centerLon: 0, minX: 0, maxX: 0, minY: 0, maxY: 0,
                                      inner: -0, outer: 0, polygon: UInt32(polygons.count)))
            polygons.append(PolygonRecord(vertexStart: UInt32(vertices.count / 2), vertexEnd: UInt32(vertices.count / 2), stripStart: 0, stripCount: 0, stripLat0: 0, stripsPerDegree: 0))
            return
        }
        let cx0 = (minX + maxX) / 2, cy = (minY + maxY) / 2
        let cx = Geodesy.normalizedLongitude(cx0)
        let start = vertices.count / 2
        var ringStart = 0
        for ringEnd in scratch.ringEnds {
            for k in ringStart..<ringEnd {
                vertices.append(Float(scratch.xs[k] - cx0))
                vertices.append(Float(scratch.ys[k] - cy))
            }
            vertices.append(Float(scratch.xs[ringStart] - cx0))
            vertices.append(Float(scratch.ys[ringStart] - cy))
            vertices.append(.nan)
            vertices.append(.nan)
            ringStart = ringEnd
        }
        let end = vertices.count / 2
        var record = PolygonRecord(vertexStart: UInt32(start), vertexEnd: UInt32(end), stripStart: 0, stripCount: 0, stripLat0: 0, stripsPerDegree: 0)
        let boxMinX = Float(minX - cx0).nextDown, boxMaxX = Float(maxX - cx0).nextUp
        let boxMinY = Float(minY - cy).nextDown, boxMaxY = Float(maxY - cy).nextUp
        let vertexCount = end - start
        let k = Geodesy.metersPerDegree(atLatitude: cy)
        if vertexCount > Self.stripThreshold, scratch.ringEnds.count == 1, maxY - minY < 1, maxX - minX < 1,
           buildSectors(&record, metric: k, scratch: &scratch) {
            // Star-shaped around the centre: angular index.
        } else if vertexCount > Self.stripThreshold, vertexCount <= Int(UInt16.max), boxMaxY > boxMinY {
            buildStrips(&record, minY: boxMinY, maxY: boxMaxY, scratch: &scratch)
        }
        let polygonNumber = polygons.count
        polygons.append(record)
        // Radii about the centre, in the centre's local metric, with a safety margin for the
        // metric's variation across the fence.
        let extentRadians = (maxY - minY) * Geodesy.radiansPerDegree
        let margin = 1e-3 + 2 * extentRadians * (abs(tan(cy * Geodesy.radiansPerDegree)) + 1)
        // A sector-indexed polygon has its centre strictly inside: only the distance is needed.
        let sector = record.stripCount == UInt32.max
        let edges = edgeScan(polygon: polygonNumber, px: 0, py: 0, kx: k.longitude, ky: k.latitude, pip: !sector)
        let centerInside = sector || (edges.inside && !edges.onBoundary)
        var farthest = 0.0
        for i in start..<end {
            let x = Double(vertices[2 * i]), y = Double(vertices[2 * i + 1])
            if x.isNaN { continue }
            let d = ((x * k.longitude) * (x * k.longitude) + (y * k.latitude) * (y * k.latitude)).squareRoot()
            farthest = max(farthest, d)
        }
        let nearestEdge = max(0, edges.distance * (1 - margin) - 0.01)
        fences.append(FenceRecord(centerLat: cy, centerLon: cx, minX: boxMinX, maxX: boxMaxX, minY: boxMinY, maxY: boxMaxY,
                                  inner: centerInside ? max(0, Float(nearestEdge).nextDown) : -Float(nearestEdge),
                                  outer: Float(farthest * (1 + margin) + 0.01).nextUp, polygon: UInt32(polygonNumber)))
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
    /// angle (so every ray from the centre crosses exactly one edge) and stores the unwrapped
    /// vertex angles. Angles are taken in the frame (x·s, y) with s = ±(metres per degree of
    /// longitude / of latitude) at the centre; the sign makes every such ring counter-clockwise.
    private mutating func buildSectors(_ record: inout PolygonRecord, metric k: (longitude: Double, latitude: Double),
                                       scratch: inout Scratch) -> Bool {
        let start = Int(record.vertexStart), end = Int(record.vertexEnd)
        let n = end - start - 2 // closed ring + separator
        guard n >= 3 else { return false }
        var scale = k.longitude / k.latitude
        // Take the buffers out of `scratch` so they stay uniquely referenced.
        var raw = scratch.angles
        var unwrapped = scratch.unwrapped
        scratch.angles = []
        scratch.unwrapped = []
        defer {
            scratch.angles = raw
            scratch.unwrapped = unwrapped
        }
        raw.removeAll(keepingCapacity: true)
        unwrapped.removeAll(keepingCapacity: true)
        for i in 0..<n {
            raw.append(atan2(Double(vertices[2 * (start + i) + 1]), Double(vertices[2 * (start + i)]) * scale))
        }
        func step(_ i: Int) -> Double {
            var d = raw[(i + 1) % n] - raw[i]
            if d > Double.pi { d -= 2 * Double.pi } else if d <= -Double.pi { d += 2 * Double.pi }
            return d
        }
        var total = 0.0
        for i in 0..<n { total += step(i) }
        // Mirroring x turns a clockwise ring counter-clockwise (and negates its angles).
        let sign: Double = total < 0 ? -1 : 1
        if total < 0 { scale = -scale }
        var a = sign > 0 ? raw[0] : (raw[0] >= 0 ? Double.pi - raw[0] : -Double.pi - raw[0])
        unwrapped.append(Float(a))
        for i in 0..<n {
            let d = sign * step(i)
            // Strictly increasing, each edge under a half turn, one turn in total.
            guard d > 1e-6, d < Double.pi - 1e-6 else { return false }
            a += d
            unwrapped.append(Float(a))
        }
        guard abs(a - Double(unwrapped[0]) - 2 * Double.pi) < 1e-6 else { return false }
        // The centre must be strictly inside (not on an edge).
        let first = Double(unwrapped[0])
        for i in 1...n where Double(unwrapped[i]) - Double(unwrapped[i - 1]) < 2e-6 { return false }
        record.stripStart = UInt32(angles.count)
        record.stripCount = UInt32.max
        record.stripLat0 = Float(first)
        record.stripsPerDegree = Float(scale)
        angles.append(contentsOf: unwrapped)
        return true
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

    private mutating func buildGrid() {
        let n = count
        guard n > 0 else { return }
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        for f in 0..<n {
            let r = fences[f]
            minX = min(minX, r.centerLon + Double(r.minX))
            maxX = max(maxX, r.centerLon + Double(r.maxX))
            minY = min(minY, r.centerLat + Double(r.minY))
            maxY = max(maxY, r.centerLat + Double(r.maxY))
        }
        let k = Geodesy.metersPerDegree(atLatitude: max(-80, min(80, (minY + maxY) / 2)))
        let widthMeters = max(1, (maxX - minX) * k.longitude)
        let heightMeters = max(1, (maxY - minY) * k.latitude)
        // Cells: about two per fence, but not much smaller than the typical fence, so that a
        // fence is listed in few cells.
        var meanSide = 0.0
        for f in 0..<n {
            let r = fences[f]
            meanSide += Double(r.maxY - r.minY) * k.latitude
        }
        meanSide /= Double(n)
        var side = max((widthMeters * heightMeters / Double(min(2 * n, 1 << 22))).squareRoot(), 1.2 * meanSide, 1)
        while true {
            columns = max(1, min(1 << 16, Int((widthMeters / side).rounded(.up))))
            rows = max(1, min(1 << 16, Int((heightMeters / side).rounded(.up))))
            cellLonDegrees = (maxX - minX) / Double(columns) * (1 + 1e-12) + 1e-12
            cellLatDegrees = (maxY - minY) / Double(rows) * (1 + 1e-12) + 1e-12
            gridLon0 = minX
            gridLat0 = minY
            // Keep the total number of cell entries bounded (big fences cover many cells).
            var entries = 0
            for f in 0..<n { entries += cellRange(f).count }
            if entries <= 4 * n + 1024 || columns * rows == 1 { break }
            side *= (Double(entries) / Double(3 * n)).squareRoot()
        }
        cellMargin = 0
        var plainEntries = 0
        for f in 0..<n { plainEntries += cellRange(f).count }
        for margin in Self.cellMargins {
            var entries = 0
            for f in 0..<n { entries += cellRange(f, marginLon: margin * cellLonDegrees, marginLat: margin * cellLatDegrees).count }
            // At most one more entry per fence on average (memory targets).
            if entries <= plainEntries + n { cellMargin = margin; break }
        }
        var counts = [UInt32](repeating: 0, count: columns * rows + 1)
        let marginLon = cellMargin * cellLonDegrees, marginLat = cellMargin * cellLatDegrees
        for f in 0..<n {
            let r = cellRange(f, marginLon: marginLon, marginLat: marginLat)
            for j in r.rows { for i in r.columns { counts[j * columns + i + 1] += 1 } }
        }
        for c in 0..<(columns * rows) { counts[c + 1] += counts[c] }
        cellStarts = ContiguousArray(counts)
        cellFences = ContiguousArray(repeating: CellEntry(minLon: 0, minLat: 0, maxLon: 0, maxLat: 0, fence: 0), count: Int(counts[columns * rows]))
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
