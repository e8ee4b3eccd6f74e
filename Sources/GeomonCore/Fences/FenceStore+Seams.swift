/// Antimeridian seams. RFC 7946 splits a polygon that crosses ±180° into parts whose rings run
/// along the antimeridian, one on each side. Unwrapped (each ring shifted by 360° multiples to
/// lie near the first), the two parts share those edges: they are where the parts meet, not a
/// boundary of the fence. Left in, the nearest "boundary" of a point near the seam would be the
/// seam, and the power policy would wake for an edge nobody can cross.
///
/// A seam piece is covered by exactly two edges of different rings, in opposite directions, so
/// every horizontal ray crosses both or neither: dropping both keeps the even-odd containment
/// test exact, and the distance scan then never sees them. The rings are written as polylines
/// broken where a seam piece was (a NaN between pieces, like the separator between rings).
extension FenceStore {
    /// Vertices within this many degrees of the antimeridian's unwrapped longitude count as on it.
    static let seamTolerance = 1e-9

    private struct SeamEdge {
        var ring: Int
        /// The edge from vertex `from` to vertex `to` (indices into the unwrapped arrays).
        var from: Int, to: Int
        var seam: Double
        var low: Double, high: Double
        /// Latitude intervals of the edge that are seam, not boundary.
        var cuts: [(low: Double, high: Double)] = []
    }

    /// The rings of one fence (unwrapped degrees; ring `r` is vertices `ringEnds[r-1]..<ringEnds[r]`,
    /// not closed) written as polylines without their shared antimeridian edges: flat `x, y`
    /// pairs, each piece followed by a NaN pair: (−NaN, NaN) between the pieces of one ring,
    /// (NaN, ±NaN) after a ring (−: the next ring begins a polygon). nil when the fence has no
    /// such edges (the usual case, decided from the longitude range alone).
    static func seamlessPolylines(xs: UnsafeBufferPointer<Double>, ys: UnsafeBufferPointer<Double>, ringEnds: [Int],
                                  memberStarts: [Bool], minX: Double, maxX: Double) -> [Double]? {
        guard ringEnds.count >= 2 else { return nil }
        let eps = seamTolerance
        var seams: [Double] = []
        var k = ((minX - eps - 180) / 360).rounded(.up)
        while 180 + 360 * k <= maxX + eps {
            seams.append(180 + 360 * k)
            k += 1
        }
        guard !seams.isEmpty else { return nil }
        var edges: [SeamEdge] = []
        var start = 0
        for (ring, end) in ringEnds.enumerated() {
            for a in start..<end {
                let b = a + 1 < end ? a + 1 : start
                guard ys[a] != ys[b], let seam = seams.first(where: { abs(xs[a] - $0) < eps && abs(xs[b] - $0) < eps }) else { continue }
                edges.append(SeamEdge(ring: ring, from: a, to: b, seam: seam, low: min(ys[a], ys[b]), high: max(ys[a], ys[b])))
            }
            start = end
        }
        guard Set(edges.map(\.ring)).count >= 2 else { return nil }
        // Per seam line: the latitude pieces covered by exactly two edges of different rings.
        var anyCut = false
        for seam in seams {
            let on = edges.indices.filter { edges[$0].seam == seam }
            let stops = Array(Set(on.flatMap { [edges[$0].low, edges[$0].high] })).sorted()
            for (y0, y1) in zip(stops, stops.dropFirst()) {
                let covering = on.filter { edges[$0].low <= y0 && edges[$0].high >= y1 }
                guard covering.count == 2, edges[covering[0]].ring != edges[covering[1]].ring else { continue }
                for e in covering {
                    if let last = edges[e].cuts.last, last.high == y0 {
                        edges[e].cuts[edges[e].cuts.count - 1].high = y1
                    } else {
                        edges[e].cuts.append((y0, y1))
                    }
                }
                anyCut = true
            }
        }
        guard anyCut else { return nil }
        var cutsByEdge: [Int: [(low: Double, high: Double)]] = [:]
        for edge in edges where !edge.cuts.isEmpty { cutsByEdge[edge.from] = edge.cuts }

        var out: [Double] = []
        out.reserveCapacity(2 * (ringEnds[ringEnds.count - 1] + 4 * ringEnds.count + 4 * cutsByEdge.count))
        start = 0
        for (ring, end) in ringEnds.enumerated() {
            // The pen: where the current piece ends. A segment that does not start there (a
            // seam piece was left out before it) begins a new piece.
            var pen: (x: Double, y: Double)?
            func draw(_ from: (x: Double, y: Double), _ to: (x: Double, y: Double)) {
                if pen.map({ $0.x != from.x || $0.y != from.y }) ?? true {
                    if pen != nil { out += [-.nan, .nan] }
                    out += [from.x, from.y]
                }
                out += [to.x, to.y]
                pen = to
            }
            for a in start..<end {
                let b = a + 1 < end ? a + 1 : start
                let pa = (x: xs[a], y: ys[a]), pb = (x: xs[b], y: ys[b])
                guard let cuts = cutsByEdge[a] else {
                    draw(pa, pb)
                    continue
                }
                // The kept parts of the edge, in its direction.
                func point(atY y: Double) -> (x: Double, y: Double) {
                    let t = (y - pa.y) / (pb.y - pa.y)
                    return (pa.x + t * (pb.x - pa.x), y)
                }
                let ascending = pb.y > pa.y
                var kept: [(low: Double, high: Double)] = []
                var from = min(pa.y, pb.y)
                for cut in cuts {
                    if cut.low > from { kept.append((from, cut.low)) }
                    from = max(from, cut.high)
                }
                if from < max(pa.y, pb.y) { kept.append((from, max(pa.y, pb.y))) }
                if !ascending { kept.reverse() }
                for piece in kept {
                    let (y0, y1) = ascending ? (piece.low, piece.high) : (piece.high, piece.low)
                    draw(y0 == pa.y ? pa : point(atY: y0), y1 == pb.y ? pb : point(atY: y1))
                }
            }
            out += [.nan, ring + 1 < memberStarts.count && memberStarts[ring + 1] ? -.nan : .nan]
            start = end
        }
        return out
    }
}
