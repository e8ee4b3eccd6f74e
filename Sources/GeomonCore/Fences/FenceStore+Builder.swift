/// Building an index one fence at a time (a file streamed feature by feature), and reading a
/// fence's geometry back from it.
///
/// Fences are stored as they come; `finishBuilding()` then puts the records (what a query
/// touches first) into spatial order. The vertices stay in arrival order: a caller streaming a
/// file holds no second copy of its geometry, so a fence file needs about its index's size.
extension FenceStore {
    /// Reserves room for about `floats` vertex coordinates (an upper bound from the input's
    /// size costs nothing: pages never written are never resident), so that the vertex array
    /// is not copied as it grows. A reserve of `hugePagesMinimum` or more goes on huge pages,
    /// as the in-memory build's arrays do: a big index is read at random and faults in 2 MiB
    /// at a time, while the last huge page's unwritten part (up to 2 MiB) is small beside it.
    mutating func reserveVertices(_ floats: Int) {
        vertices.reserveCapacity(floats)
        if vertices.capacity * MemoryLayout<Float>.stride >= Self.hugePagesMinimum { Self.adviseHugePages(&vertices) }
    }

    /// The streamed vertex reserve from which it goes on huge pages (a GeoJSON file of 48 MB
    /// or more).
    static let hugePagesMinimum = 64 << 20

    /// Reserves room for `count` fences' records (a polygon header each at most).
    mutating func reserveFences(_ count: Int) {
        fences.reserveCapacity(count)
        polygons.reserveCapacity(count)
    }

    /// Vertex coordinates stored so far.
    var vertexFloats: Int { vertices.count }

    /// Adds one fence; its number is the count before the call.
    mutating func append(_ shape: FenceShape, scratch: inout Scratch) {
        let external = UInt32(fences.count)
        switch shape {
        case let .circle(center, radius): addCircle(center: center, radiusMeters: radius)
        case let .polygons(members): addPolygons(members, scratch: &scratch)
        case let .corridor(lines, width): addCorridor(lines, widthMeters: width, scratch: &scratch)
        }
        fences[fences.count - 1].external = external
    }

    /// Orders the records spatially (by centre), maps fence numbers to them and builds the grid.
    mutating func finishBuilding() {
        let order = Self.spatialOrder(points: fences.map { ($0.centerLon, $0.centerLat) })
        var sorted = ContiguousArray<FenceRecord>()
        sorted.reserveCapacity(fences.count)
        for slot in order { sorted.append(fences[slot]) }
        fences = sorted
        internalIDs = ContiguousArray(repeating: 0, count: fences.count)
        for (slot, record) in fences.enumerated() { internalIDs[Int(record.external)] = UInt32(slot) }
        buildGrid()
        // The vertices keep their reserve: its pages were never written, so cost nothing,
        // while a copy to the exact size would hold both for a moment.
        polygons = Self.exact(polygons)
        stripEdges = Self.exact(stripEdges)
        stripStarts = Self.exact(stripStarts)
    }

    /// Fence `f`'s geometry as the index holds it (what is monitored): circles exactly;
    /// polygons and corridors with their vertices rounded to the index's float offsets from the
    /// fence's centre (under a millimetre for fences up to ~10 km across), longitudes in
    /// [−180, 180], rings closed, the polygons and holes as given.
    func shape(of f: Int) -> FenceShape {
        let record = fences[Int(internalIDs[f])]
        if record.polygon == UInt32.max {
            return .circle(center: Coordinate(latitude: record.centerLat, longitude: record.centerLon), radiusMeters: Double(record.outer))
        }
        let corridor = record.polygon & Self.corridorBit != 0
        let polygon = polygons[Int(record.polygon & ~Self.corridorBit)]
        var start = Int(polygon.vertexStart)
        let end = Int(polygon.vertexEnd)
        func point(_ k: Int) -> Coordinate {
            Coordinate(latitude: record.centerLat + Double(vertices[2 * k + 1]),
                       longitude: Geodesy.normalizedLongitude(record.centerLon + Double(vertices[2 * k])))
        }
        if corridor {
            let width = 2 * Double(vertices[2 * start])
            start += 1
            var lines: [[Coordinate]] = [], line: [Coordinate] = []
            for k in start..<end {
                if vertices[2 * k].isNaN {
                    if !line.isEmpty { lines.append(line) }
                    line = []
                } else {
                    line.append(point(k))
                }
            }
            if !line.isEmpty { lines.append(line) }
            return .corridor(lines: lines, widthMeters: width)
        }
        var members: [PolygonRings] = []
        var ring: [Coordinate] = []
        var newMember = true
        for k in start..<end {
            let x = vertices[2 * k]
            guard x.isNaN else {
                let p = point(k)
                // A piece after a seam break starts where the ring left the seam.
                if ring.last != p { ring.append(p) }
                continue
            }
            if x.sign == .minus { continue } // the next piece continues this ring
            if let first = ring.first, ring.count > 1, ring.last == first { ring.removeLast() }
            if !ring.isEmpty {
                if newMember || members.isEmpty {
                    members.append(PolygonRings(shell: ring + [ring[0]]))
                } else {
                    members[members.count - 1].holes.append(ring + [ring[0]])
                }
            }
            ring = []
            newMember = vertices[2 * k + 1].sign == .minus
        }
        return .polygons(members)
    }
}
