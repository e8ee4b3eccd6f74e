/// Validity rules for polygon fences, as pure functions.
///
/// Coordinates are treated as planar (x = longitude, y = latitude), as in GeoJSON. A ring may
/// repeat its first vertex at the end (closed) or not (closable); consecutive duplicate
/// vertices are ignored. Vertex numbers in problems are indices into the ring as given.
public enum PolygonValidity {
    /// An edge between two vertices of the ring as given (`to` wraps to the first vertex).
    public struct Edge: Hashable, Sendable {
        public var from: Int
        public var to: Int
        public init(from: Int, to: Int) {
            self.from = from
            self.to = to
        }
    }

    public enum RingProblem: Hashable, Sendable {
        /// A vertex is not finite or outside [-90, 90] × [-180, 180].
        case invalidCoordinate(index: Int)
        /// Fewer than 3 distinct vertices.
        case tooFewDistinctPoints(count: Int)
        /// The ring encloses no area (all vertices on one line).
        case zeroArea
        /// Two edges cross or touch (or one doubles back on its neighbour).
        case selfIntersection(Edge, Edge)
    }

    public enum PolygonProblem: Hashable, Sendable {
        case shell(RingProblem)
        case hole(Int, RingProblem)
        /// A hole (by index) is not inside the shell.
        case holeOutsideShell(Int)
        /// Two holes (by index, the first the lower) overlap: their edges cross, one lies inside
        /// the other, or they are one ring twice. The even-odd rule reads their common part as
        /// inside the polygon. Holes that touch at points are fine.
        case holesOverlap(Int, Int)
    }

    /// One ring read in two passes (one when its positions are not all valid): its problems, as
    /// `problems(ofRing:)` gives them, and what RFC 7946 asks of it though no answer depends on
    /// it (the winding, repeated positions), for a reader that reports both.
    public struct RingSurvey: Sendable {
        public var problems: [RingProblem]
        /// A position equals the one before it.
        public var repeatsPosition: Bool
        /// Twice the signed shoelace area, longitudes measured from the first position's the
        /// short way round (so a ring across the antimeridian winds as drawn): positive when
        /// counterclockwise.
        public var twiceSignedArea: Double
    }

    /// `polygon` as the fence index sees it when an edge crosses the antimeridian (its
    /// longitude changes by more than 180°: the short way, docs/geometry.md): every ring
    /// unwrapped to run on continuously from the shell's first position, the whole moved so its
    /// longitudes centre on 0 (a translation, which keeps every crossing and containment).
    /// Otherwise, or with a position that is not valid, `polygon` itself. The rules on planar
    /// coordinates then judge the rings the daemon monitors, not the ones they wrap into.
    public static func unwrapped(_ polygon: PolygonRings) -> PolygonRings {
        let rings = [polygon.shell] + polygon.holes
        guard rings.allSatisfy({ $0.allSatisfy(\.isValid) }), let origin = polygon.shell.first?.longitude else { return polygon }
        let crosses = rings.contains { ring in
            zip(ring, ring.dropFirst() + ring.prefix(1)).contains { abs($0.longitude - $1.longitude) > 180 }
        }
        guard crosses else { return polygon }
        var unwrapped: [[Coordinate]] = []
        var low = Double.infinity, high = -Double.infinity
        for ring in rings {
            guard let first = ring.first else { unwrapped.append(ring); continue }
            var lon = origin + Geodesy.longitudeDelta(origin, first.longitude)
            var previous = first.longitude
            var out: [Coordinate] = []
            out.reserveCapacity(ring.count)
            for (k, point) in ring.enumerated() {
                if k > 0 { lon += Geodesy.longitudeDelta(previous, point.longitude) }
                previous = point.longitude
                low = min(low, lon); high = max(high, lon)
                out.append(Coordinate(latitude: point.latitude, longitude: lon))
            }
            unwrapped.append(out)
        }
        // Wider than a hemisphere: the limits refuse it anyway; judged as given.
        guard high - low < 180 else { return polygon }
        let centre = (low + high) / 2
        let moved = unwrapped.map { $0.map { Coordinate(latitude: $0.latitude, longitude: $0.longitude - centre) } }
        return PolygonRings(shell: moved[0], holes: Array(moved.dropFirst()))
    }

    /// All problems of a polygon with holes; empty when it is valid.
    public static func problems(of polygon: PolygonRings) -> [PolygonProblem] {
        problems(of: polygon, surveys: [survey(ofRing: polygon.shell)] + polygon.holes.map(survey(ofRing:)))
    }

    /// All problems of a polygon with holes, its rings already surveyed (the shell's first, then
    /// the holes' in order); empty when it is valid.
    public static func problems(of polygon: PolygonRings, surveys: [RingSurvey]) -> [PolygonProblem] {
        let shellProblems = surveys[0].problems
        var result = shellProblems.map(PolygonProblem.shell)
        var placed: [Int] = []
        for (n, hole) in polygon.holes.enumerated() {
            let holeProblems = surveys[n + 1].problems
            result += holeProblems.map { PolygonProblem.hole(n, $0) }
            guard shellProblems.isEmpty && holeProblems.isEmpty else { continue }
            if holeIsInside(hole, polygon.shell) { placed.append(n) } else { result.append(.holeOutsideShell(n)) }
        }
        result += overlappingHoles(polygon.holes, among: placed).map { PolygonProblem.holesOverlap($0.0, $0.1) }
        return result
    }

    /// The pairs of `holes` (of those at `indices`) that overlap, in index order. Only pairs
    /// whose bounding boxes meet are compared: boxes sorted by their west edge, each against
    /// the ones that start before it ends.
    static func overlappingHoles(_ holes: [[Coordinate]], among indices: [Int]) -> [(Int, Int)] {
        guard indices.count >= 2 else { return [] }
        struct Box { var index: Int; var minX, maxX, minY, maxY: Double }
        let boxes = indices.map { n in
            let (minX, maxX, minY, maxY) = bounds(holes[n])
            return Box(index: n, minX: minX, maxX: maxX, minY: minY, maxY: maxY)
        }.sorted { ($0.minX, $0.index) < ($1.minX, $1.index) }
        var pairs: [(Int, Int)] = []
        for a in boxes.indices {
            for b in boxes.indices[(a + 1)...] {
                if boxes[b].minX > boxes[a].maxX { break }
                guard boxes[b].minY <= boxes[a].maxY, boxes[a].minY <= boxes[b].maxY else { continue }
                let i = boxes[a].index, j = boxes[b].index
                if ringsOverlap(holes[i], holes[j]) { pairs.append((min(i, j), max(i, j))) }
            }
        }
        return pairs.sorted { $0 < $1 }
    }

    /// True when the areas of two simple rings overlap: an edge of one properly crosses one of
    /// the other, or a vertex of either, or the middle of a piece of its edge between the other's
    /// vertices on it, lies strictly inside the other; or neither ring has such a point off the
    /// other's boundary (the same ring twice). Rings that touch at points, or share stretches
    /// of edge from outside, do not overlap. A point within `touchDegrees` of an edge counts as
    /// on it: a vertex that lies on another ring's edge lies a rounding error beside it once
    /// written in decimals and read back in binary. Very large pairs (over 4 million edge pairs) are not checked.
    static func ringsOverlap(_ a: [Coordinate], _ b: [Coordinate]) -> Bool {
        guard a.count >= 3, b.count >= 3, a.count * b.count <= 4_000_000 else { return false }
        if ringsCross(a, b, touch: touchDegrees) { return true }
        var off = false
        for (ring, other) in [(b, a), (a, b)] {
            for i in ring.indices {
                let p = ring[i], q = ring[(i + 1) % ring.count]
                // The edge cut at the other ring's vertices on it: each piece lies wholly inside,
                // outside or on the other ring, so its middle decides for it.
                let cuts = Self.cuts(p, q, by: other)
                var points = [p]
                for k in 1..<cuts.count where cuts[k] > cuts[k - 1] {
                    points.append(along(p, q, (cuts[k - 1] + cuts[k]) / 2))
                }
                for point in points where !other.indices.contains(where: { isNear(point, segment: other[$0], other[($0 + 1) % other.count]) }) {
                    if pointIsInsideOrOn(point, ring: other) { return true }
                    off = true
                }
            }
        }
        return !off
    }

    /// Within this many degrees (about 0.1 m) of an edge, a point is on it (`ringsOverlap`):
    /// a vertex snapped onto an edge and written with RFC 7946's six decimals lands up to
    /// 5·10⁻⁷° beside it. An overlap thinner than this is left alone: the even-odd rule then
    /// errs only within it.
    static let touchDegrees = 1e-6

    /// Where `vertices` lying on the segment p–q (within `touchDegrees`) cut it: their
    /// parameters along it, with 0 and 1, in order.
    private static func cuts<Vertices: Sequence>(_ p: Coordinate, _ q: Coordinate, by vertices: Vertices) -> [Double]
        where Vertices.Element == Coordinate
    {
        var cuts: [Double] = [0, 1]
        let dx = q.longitude - p.longitude, dy = q.latitude - p.latitude
        let length2 = dx * dx + dy * dy
        if length2 > 0 {
            for v in vertices where isNear(v, segment: p, q) {
                let t = ((v.longitude - p.longitude) * dx + (v.latitude - p.latitude) * dy) / length2
                if t > 0, t < 1 { cuts.append(t) }
            }
        }
        return cuts.sorted()
    }

    /// The ring's box: least and greatest longitude, then latitude.
    private static func bounds(_ ring: [Coordinate]) -> (minX: Double, maxX: Double, minY: Double, maxY: Double) {
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        for point in ring {
            minX = min(minX, point.longitude); maxX = max(maxX, point.longitude)
            minY = min(minY, point.latitude); maxY = max(maxY, point.latitude)
        }
        return (minX, maxX, minY, maxY)
    }

    /// The point at parameter `t` along the segment p–q.
    private static func along(_ p: Coordinate, _ q: Coordinate, _ t: Double) -> Coordinate {
        Coordinate(latitude: p.latitude + t * (q.latitude - p.latitude), longitude: p.longitude + t * (q.longitude - p.longitude))
    }

    /// Whether `point` is within `tolerance` degrees of the segment a–b.
    private static func isNear(_ point: Coordinate, segment a: Coordinate, _ b: Coordinate, within tolerance: Double = touchDegrees) -> Bool {
        let dx = b.longitude - a.longitude, dy = b.latitude - a.latitude
        let px = point.longitude - a.longitude, py = point.latitude - a.latitude
        let length2 = dx * dx + dy * dy
        let t = length2 > 0 ? min(1, max(0, (px * dx + py * dy) / length2)) : 0
        let ex = px - t * dx, ey = py - t * dy
        return ex * ex + ey * ey <= tolerance * tolerance
    }

    /// Problems of one ring; at most one self-intersection is reported.
    public static func problems(ofRing ring: [Coordinate]) -> [RingProblem] {
        survey(ofRing: ring).problems
    }

    /// Surveys one ring. The usual ring (valid positions, closed, none repeated, star-shaped
    /// around its mean) takes two passes without allocating: one for the positions' validity,
    /// their mean, repeats and the winding, one for the star shape (`isStarShaped`).
    public static func survey(ofRing ring: [Coordinate]) -> RingSurvey {
        var allValid = true
        var repeated = false
        var twiceArea = 0.0
        var usual = false
        ring.withUnsafeBufferPointer { r in
            guard let first = r.first else { return }
            allValid = first.isValid
            let origin = first.longitude
            // The sum of all positions but the last (the closing one, when the ring is closed).
            var sumX = 0.0, sumY = 0.0
            var a = first, ax = 0.0
            for k in 1..<r.count {
                let b = r[k]
                if !b.isValid { allValid = false }
                if a == b { repeated = true }
                sumX += a.longitude; sumY += a.latitude
                let bx = Geodesy.longitudeDelta(origin, b.longitude)
                twiceArea += ax * b.latitude - bx * a.latitude
                a = b; ax = bx
            }
            let m = r.count - 1
            usual = allValid && !repeated && r.count >= 4 && first == r[m]
                && isStarShaped(UnsafeBufferPointer(rebasing: r[..<m]), centerX: sumX / Double(m), centerY: sumY / Double(m))
        }
        let problems: [RingProblem]
        if !allValid {
            problems = [.invalidCoordinate(index: ring.firstIndex { !$0.isValid } ?? 0)]
        } else {
            problems = usual ? [] : unusualProblems(ofRing: ring)
        }
        return RingSurvey(problems: problems, repeatsPosition: repeated, twiceSignedArea: twiceArea)
    }

    /// Problems of a ring of valid positions that is not known to be simple: with repeats,
    /// unclosed, or not star-shaped around its mean.
    private static func unusualProblems(ofRing ring: [Coordinate]) -> [RingProblem] {
        // Vertex indices without consecutive duplicates and without the closing vertex.
        var indices: [Int] = []
        indices.reserveCapacity(ring.count)
        for i in ring.indices where indices.last.map({ ring[$0] != ring[i] }) ?? true {
            indices.append(i)
        }
        while indices.count > 1, let last = indices.last, ring[last] == ring[indices[0]] {
            indices.removeLast()
        }
        // Count distinct vertices up to 3 (enough to decide).
        var distinct = indices.isEmpty ? 0 : 1
        var second: Coordinate?
        for k in indices where ring[k] != ring[indices[0]] {
            if let second {
                if ring[k] != second { distinct = 3; break }
            } else {
                second = ring[k]
                distinct = 2
            }
        }
        if distinct < 3 {
            return [.tooFewDistinctPoints(count: distinct)]
        }
        let points = indices.map { ring[$0] }
        if allCollinear(points) {
            return [.zeroArea]
        }
        if !isStarShapedAroundCentroid(points), let crossing = firstSelfIntersection(ring, indices) {
            return [.selfIntersection(crossing.0, crossing.1)]
        }
        if abs(signedArea(points)) < 1e-14 {
            return [.zeroArea]
        }
        return []
    }

    /// True when the ring is strictly star-shaped around its vertices' mean: seen from it,
    /// every edge turns the same way (by a clear margin) and the edges make one turn in all.
    /// Such a ring is simple (each edge lies in its own angular sector), so the sweep for
    /// crossings is not needed: the usual case for circles drawn as polygons, rectangles and
    /// most small fences, checked without allocation.
    static func isStarShapedAroundCentroid<Points: RandomAccessCollection>(_ points: Points) -> Bool where Points.Element == Coordinate {
        let n = points.count
        guard n >= 3 else { return false }
        var cx = 0.0, cy = 0.0
        for p in points { cx += p.longitude; cy += p.latitude }
        return isStarShaped(points, centerX: cx / Double(n), centerY: cy / Double(n))
    }

    /// `isStarShapedAroundCentroid` with the centre given, in one pass: the cross products'
    /// extremes and the scale (farthest vertex) are gathered together and the margin applied
    /// after, which decides as testing each cross product against the margin would.
    static func isStarShaped<Points: RandomAccessCollection>(_ points: Points, centerX cx: Double, centerY cy: Double) -> Bool where Points.Element == Coordinate {
        let n = points.count
        guard n >= 3 else { return false }
        var scale2 = 0.0
        var minCross = Double.infinity, maxCross = -Double.infinity
        var turns = 0
        let last = points[points.index(points.endIndex, offsetBy: -1)]
        var ax = last.longitude - cx, ay = last.latitude - cy
        for p in points {
            let bx = p.longitude - cx, by = p.latitude - cy
            // Written as selects rather than `max`/`min`, whose NaN rules cost four
            // instructions each (nothing here is NaN: the positions are valid).
            let distance2 = bx * bx + by * by
            scale2 = distance2 > scale2 ? distance2 : scale2
            let cross = ax * by - ay * bx
            minCross = cross < minCross ? cross : minCross
            maxCross = cross > maxCross ? cross : maxCross
            // Edges crossing the ray from the centre towards +x (half-open in y).
            if (ay <= 0) != (by <= 0), ax + (0 - ay) * (bx - ax) / (by - ay) > 0 { turns += 1 }
            ax = bx; ay = by
        }
        guard scale2 > 0 else { return false }
        // Cross products within this of zero are too close to call (a vertex nearly in line
        // with the centre and its neighbour): such rings are left to the sweep.
        let margin = scale2 * 1e-9
        return (minCross > margin || maxCross < -margin) && turns == 1
    }

    /// True when every point lies on the line through the first point and the point farthest
    /// from it (within a relative tolerance).
    static func allCollinear(_ points: [Coordinate]) -> Bool {
        guard let origin = points.first else { return true }
        var far = origin
        var farDistance = 0.0
        for point in points {
            let dx = point.longitude - origin.longitude, dy = point.latitude - origin.latitude
            let d = dx * dx + dy * dy
            if d > farDistance { farDistance = d; far = point }
        }
        guard farDistance > 0 else { return true }
        let length = farDistance.squareRoot()
        for point in points where abs(orientation(origin, far, point)) / length > 1e-12 {
            return false
        }
        return true
    }

    /// True when `hole` lies inside `shell`, touching it at points allowed: no edges cross,
    /// and then each stretch of the hole's boundary between the points where it touches the
    /// shell lies wholly on one side, so one point of it off the shell's boundary decides. As
    /// between holes, a point within `touchDegrees` of the shell's edge is on it (a hole
    /// touching its shell at a point written in decimals lies a rounding error outside). A hole
    /// with no point off the shell's boundary covers no part of the shell's inside: false.
    static func holeIsInside(_ hole: [Coordinate], _ shell: [Coordinate]) -> Bool {
        // The shell first: only its few edges near the (smaller) hole are tested.
        if ringsCross(shell, hole, touch: touchDegrees) { return false }
        guard hole.count >= 3, shell.count >= 3 else { return false }
        // The shell's edges that come within the touch distance of the hole's box.
        let (minX, maxX, minY, maxY) = bounds(hole)
        let near = shell.indices.filter { k in
            let a = shell[k], b = shell[(k + 1) % shell.count]
            return max(a.longitude, b.longitude) >= minX - touchDegrees && min(a.longitude, b.longitude) <= maxX + touchDegrees
                && max(a.latitude, b.latitude) >= minY - touchDegrees && min(a.latitude, b.latitude) <= maxY + touchDegrees
        }
        // Not near the shell's boundary anywhere: one vertex decides.
        guard !near.isEmpty else { return pointIsInsideOrOn(hole[0], ring: shell) }
        func onShell(_ point: Coordinate) -> Bool {
            near.contains { isNear(point, segment: shell[$0], shell[($0 + 1) % shell.count]) }
        }
        // Very large pairs (as for the crossing test, over 4 million edge pairs): the first
        // vertex off the shell's boundary decides, as for a hole that touches it nowhere.
        guard hole.count * near.count <= 4_000_000 else {
            for vertex in hole where !onShell(vertex) { return pointIsInsideOrOn(vertex, ring: shell) }
            return false
        }
        // Walk the hole's boundary, its edges cut at the shell's vertices on them; a point on
        // the shell's boundary starts a new stretch, whose first point off it is tested.
        var untested = true, off = false
        for i in hole.indices {
            let p = hole[i], q = hole[(i + 1) % hole.count]
            let cuts = Self.cuts(p, q, by: near.lazy.map { shell[$0] })
            var points = [(point: p, cut: false)]
            for k in 1..<cuts.count where cuts[k] > cuts[k - 1] {
                points.append((along(p, q, (cuts[k - 1] + cuts[k]) / 2), false))
                if k < cuts.count - 1 { points.append((along(p, q, cuts[k]), true)) }
            }
            for (point, cut) in points {
                if cut || onShell(point) {
                    untested = true
                    continue
                }
                off = true
                guard untested else { continue }
                if !pointIsInsideOrOn(point, ring: shell) { return false }
                untested = false
            }
        }
        return off
    }

    /// True when an edge of `a` properly crosses an edge of `b` (touching does not count, nor,
    /// with a `touch` distance, a crossing with an end of either edge within it of the other:
    /// a T-junction a rounding error off). Very large pairs (over 4 million edge pairs) are not
    /// checked.
    static func ringsCross(_ a: [Coordinate], _ b: [Coordinate], touch: Double = 0) -> Bool {
        guard a.count >= 2, b.count >= 2, a.count * b.count <= 4_000_000 else { return false }
        // Only edges of `a` that reach into `b`'s box can cross it.
        let (minX, maxX, minY, maxY) = bounds(b)
        for i in a.indices {
            let p = a[i], q = a[(i + 1) % a.count]
            if max(p.longitude, q.longitude) < minX || min(p.longitude, q.longitude) > maxX
                || max(p.latitude, q.latitude) < minY || min(p.latitude, q.latitude) > maxY { continue }
            for k in b.indices {
                let r = b[k], t = b[(k + 1) % b.count]
                if max(p.longitude, q.longitude) < min(r.longitude, t.longitude) || max(r.longitude, t.longitude) < min(p.longitude, q.longitude) { continue }
                let o1 = sign(orientation(p, q, r)), o2 = sign(orientation(p, q, t))
                let o3 = sign(orientation(r, t, p)), o4 = sign(orientation(r, t, q))
                guard o1 * o2 < 0, o3 * o4 < 0 else { continue }
                if touch > 0, isNear(r, segment: p, q, within: touch) || isNear(t, segment: p, q, within: touch)
                    || isNear(p, segment: r, t, within: touch) || isNear(q, segment: r, t, within: touch) { continue }
                return true
            }
        }
        return false
    }

    /// Shoelace area in square degrees; positive when counter-clockwise.
    public static func signedArea(_ ring: [Coordinate]) -> Double {
        guard ring.count >= 3 else { return 0 }
        var sum = 0.0
        var previous = ring[ring.count - 1]
        let origin = ring[0]
        for point in ring {
            sum += (previous.longitude - origin.longitude) * (point.latitude - origin.latitude)
                - (point.longitude - origin.longitude) * (previous.latitude - origin.latitude)
            previous = point
        }
        return sum / 2
    }

    /// Even-odd ray cast; points on the boundary count as inside.
    public static func pointIsInsideOrOn(_ point: Coordinate, ring: [Coordinate]) -> Bool {
        guard ring.count >= 3 else { return false }
        var inside = false
        var j = ring.count - 1
        for i in ring.indices {
            let a = ring[j], b = ring[i]
            if orientation(a, b, point) == 0 && between(a, b, point) { return true }
            if (b.latitude > point.latitude) != (a.latitude > point.latitude) {
                let x = b.longitude + (point.latitude - b.latitude) * (a.longitude - b.longitude) / (a.latitude - b.latitude)
                if point.longitude < x { inside.toggle() }
            }
            j = i
        }
        return inside
    }

    // MARK: - Segment tests

    private static func orientation(_ a: Coordinate, _ b: Coordinate, _ c: Coordinate) -> Double {
        (b.longitude - a.longitude) * (c.latitude - a.latitude) - (b.latitude - a.latitude) * (c.longitude - a.longitude)
    }

    /// For a point known to be collinear with a–b: is it within the segment's box?
    private static func between(_ a: Coordinate, _ b: Coordinate, _ p: Coordinate) -> Bool {
        min(a.longitude, b.longitude) <= p.longitude && p.longitude <= max(a.longitude, b.longitude)
            && min(a.latitude, b.latitude) <= p.latitude && p.latitude <= max(a.latitude, b.latitude)
    }

    private static func sign(_ value: Double) -> Int { value > 0 ? 1 : (value < 0 ? -1 : 0) }

    /// Closed segments a–b and c–d share at least one point.
    static func segmentsTouch(_ a: Coordinate, _ b: Coordinate, _ c: Coordinate, _ d: Coordinate) -> Bool {
        let o1 = sign(orientation(a, b, c)), o2 = sign(orientation(a, b, d))
        let o3 = sign(orientation(c, d, a)), o4 = sign(orientation(c, d, b))
        if o1 != o2 && o3 != o4 && o1 * o2 <= 0 && o3 * o4 <= 0 { return true }
        if o1 == 0 && between(a, b, c) { return true }
        if o2 == 0 && between(a, b, d) { return true }
        if o3 == 0 && between(c, d, a) { return true }
        if o4 == 0 && between(c, d, b) { return true }
        return false
    }

    /// Sweep-and-prune along longitude: edges are sorted by their west end and each is only
    /// tested against edges whose longitude span overlaps it.
    private static func firstSelfIntersection(_ ring: [Coordinate], _ indices: [Int]) -> (Edge, Edge)? {
        let m = indices.count
        @inline(__always) func start(_ k: Int) -> Coordinate { ring[indices[k]] }
        @inline(__always) func end(_ k: Int) -> Coordinate { ring[indices[(k + 1) % m]] }
        func edge(_ k: Int) -> Edge { Edge(from: indices[k], to: indices[(k + 1) % m]) }

        func conflict(_ i: Int, _ j: Int) -> Bool {
            let a = start(i), b = end(i), c = start(j), d = end(j)
            if (i + 1) % m == j || (j + 1) % m == i {
                // Neighbours share a vertex; they conflict only when one doubles back on the other.
                let (p, q, r) = (i + 1) % m == j ? (a, b, d) : (c, d, b)
                if orientation(p, q, r) != 0 { return false }
                let dot = (q.longitude - p.longitude) * (r.longitude - q.longitude) + (q.latitude - p.latitude) * (r.latitude - q.latitude)
                return dot < 0 || m == 3
            }
            return segmentsTouch(a, b, c, d)
        }

        if m <= 32 {
            for i in 0..<m {
                for j in (i + 1)..<m where conflict(i, j) {
                    return (edge(i), edge(j))
                }
            }
            return nil
        }
        struct Box {
            var minX, maxX, minY, maxY: Double
            var k: Int
        }
        var boxes: [Box] = []
        boxes.reserveCapacity(m)
        for k in 0..<m {
            let a = start(k), b = end(k)
            boxes.append(Box(minX: min(a.longitude, b.longitude), maxX: max(a.longitude, b.longitude),
                             minY: min(a.latitude, b.latitude), maxY: max(a.latitude, b.latitude), k: k))
        }
        boxes.sort { $0.minX < $1.minX || ($0.minX == $1.minX && $0.k < $1.k) }
        var active: [Box] = []
        var found: (Int, Int)?
        for box in boxes {
            active.removeAll { $0.maxX < box.minX }
            for other in active where other.minY <= box.maxY && box.minY <= other.maxY {
                if conflict(other.k, box.k) {
                    let pair = (min(other.k, box.k), max(other.k, box.k))
                    if let best = found, best <= pair { continue }
                    found = pair
                }
            }
            if found != nil { break }
            active.append(box)
        }
        guard let found else { return nil }
        return (edge(found.0), edge(found.1))
    }
}
