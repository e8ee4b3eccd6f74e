#if canImport(Glibc)
import Glibc
#endif

/// Distance from a point to one fence's boundary; negative inside.
public struct FenceDistance: Hashable, Sendable {
    public var fence: Int
    public var signedDistanceMeters: Double
    public init(fence: Int, signedDistanceMeters: Double) {
        self.fence = fence
        self.signedDistanceMeters = signedDistanceMeters
    }
}

/// Everything the monitor needs about one point, from one pass over the index.
public struct FenceQueryResult: Hashable, Sendable {
    /// Fences containing the point (boundary counts as inside), ascending.
    public var containing: [Int]
    /// The nearest boundary within the search radius, if any.
    public var nearest: FenceDistance?
    /// Distance the point may move without any fence membership changing: the distance to
    /// the nearest boundary, or the search radius when no boundary is within it.
    public var clearanceMeters: Double

    public init(containing: [Int] = [], nearest: FenceDistance? = nil, clearanceMeters: Double = 0) {
        self.containing = containing
        self.nearest = nearest
        self.clearanceMeters = clearanceMeters
    }
}

/// What the monitor learns about one fix from one pass over the index: the fences containing
/// it, the fences whose boundary is within the band (the fix's accuracy plus hysteresis: where
/// the engine cannot be certain), and the nearest boundary within the search radius.
public struct FenceProbe: Hashable, Sendable {
    /// Fences containing the point (boundary counts as inside), ascending.
    public var containing: [Int]
    /// Fences whose boundary is within `bandMeters`, ascending by fence, with signed distances.
    public var band: [FenceDistance]
    /// The nearest boundary within `searchRadiusMeters`, if any.
    public var nearest: FenceDistance?
    public var searchRadiusMeters: Double
    public var bandMeters: Double

    public init(containing: [Int] = [], band: [FenceDistance] = [], nearest: FenceDistance? = nil,
                searchRadiusMeters: Double = 0, bandMeters: Double = 0) {
        self.containing = containing
        self.band = band
        self.nearest = nearest
        self.searchRadiusMeters = searchRadiusMeters
        self.bandMeters = bandMeters
    }

    /// Unsigned distance to the nearest boundary found, nil when none is within the radius.
    public var nearestDistanceMeters: Double? { nearest.map { abs($0.signedDistanceMeters) } }
}

/// Answers, for a point, which fences contain it and how far the nearest boundaries are.
///
/// Semantics (see docs/geometry.md): polygon edges are straight lines in longitude/latitude
/// (GeoJSON), rings may have either orientation, a point on a boundary is inside, holes are
/// outside, members of a multipolygon must not overlap (overlaps count even-odd). A polygon
/// edge whose longitude changes by more than 180° is taken to cross the antimeridian. Distances
/// are metres on WGS84 (local ellipsoidal metric at the query point; ~0.1 % up to 100 km).
///
/// Design: a uniform cell grid over the fences' extent (cells ≈ 2 × fences), each fence listed
/// in the cells its bounding box touches; per fence a centre with inner/outer radii for O(1)
/// inside/outside decisions and distance bounds; polygon vertices as Float offsets from the
/// centre; polygons with many vertices get a latitude-strip edge index.
public struct FenceIndex: Sendable {
    let store: FenceStore

    public init(shapes: [FenceShape]) {
        self.store = FenceStore(shapes: shapes)
    }

    init(store: FenceStore) {
        self.store = store
    }

    /// Builds an index one fence at a time (fence numbers in the order added), holding only
    /// the index's compact form: a file can be streamed into it without keeping its shapes.
    public struct Builder: Sendable {
        private var store = FenceStore()
        private var scratch = FenceStore.Scratch()

        public init() {}

        /// A builder for a GeoJSON text of `bytes` bytes: it reserves the vertex storage such a
        /// text can hold at most (a position takes at least 6 bytes of text), which is never
        /// copied as it fills; the unused part is never touched, so it costs no memory.
        public init(geoJSONBytes bytes: Int) {
            store.reserveVertices(bytes / 6 * 2 + 1024)
        }

        /// Makes room for the fences of a GeoJSON text of `bytes` bytes (as `init(geoJSONBytes:)`).
        public mutating func reserve(geoJSONBytes bytes: Int) {
            store.reserveVertices(store.vertexFloats + bytes / 6 * 2 + 1024)
        }

        /// Makes room for `fences` fences in all (a streaming caller that knows how many are
        /// coming spares the records' arrays their copies as they grow).
        public mutating func reserve(fences: Int) {
            store.reserveFences(fences)
        }

        /// Adds a fence; returns its number.
        @discardableResult
        public mutating func add(_ shape: FenceShape) -> Int {
            store.append(shape, scratch: &scratch)
            return store.count - 1
        }

        public var count: Int { store.count }

        public consuming func build() -> FenceIndex {
            store.finishBuilding()
            return FenceIndex(store: store)
        }
    }

    public var count: Int { store.count }

    /// Bytes held by the index structures.
    public var indexBytes: Int { store.bytes }

    /// Fence `fence`'s geometry as the index holds it, which is what is monitored (vertices
    /// rounded to the index's float offsets from the fence's centre; see `FenceStore.shape(of:)`).
    public func shape(of fence: Int) -> FenceShape {
        store.shape(of: fence)
    }

    /// Fences containing `point` (a point on the boundary is inside), in ascending index order.
    public func containing(_ point: Coordinate) -> [Int] {
        var result = FenceQueryResult()
        store.query(point, within: 0, wantNearest: false, into: &result)
        return result.containing
    }

    /// Fences whose boundary lies within `radiusMeters` of `point`, ascending index order.
    public func near(_ point: Coordinate, within radiusMeters: Double) -> [FenceDistance] {
        store.near(point, within: radiusMeters)
    }

    /// The fence whose boundary is nearest to `point`, among those within `searchRadiusMeters`.
    /// Ties go to the lower index.
    public func nearestBoundary(to point: Coordinate, within searchRadiusMeters: Double = .infinity) -> FenceDistance? {
        var result = FenceQueryResult()
        store.query(point, within: searchRadiusMeters, wantNearest: true, into: &result)
        return result.nearest
    }

    /// Signed distance in metres from `point` to fence `fence`'s boundary (negative inside).
    public func signedDistance(fence: Int, to point: Coordinate) -> Double {
        store.signedDistance(fence: fence, to: point)
    }

    /// Containing fences, fences within `bandMeters` and the nearest boundary within
    /// `searchRadiusMeters`, in one pass (`FenceProbe`).
    public func probe(_ point: Coordinate, within searchRadiusMeters: Double = .infinity, band bandMeters: Double) -> FenceProbe {
        var result = FenceProbe()
        store.probe(point, within: searchRadiusMeters, band: bandMeters, into: &result)
        return result
    }

    /// As `probe(_:within:band:)`, reusing `result`'s storage.
    public func probe(_ point: Coordinate, within searchRadiusMeters: Double, band bandMeters: Double, into result: inout FenceProbe) {
        store.probe(point, within: searchRadiusMeters, band: bandMeters, into: &result)
    }

    /// Containing fences, nearest boundary within `searchRadiusMeters` and the clearance, in one pass.
    public func query(_ point: Coordinate, within searchRadiusMeters: Double = .infinity) -> FenceQueryResult {
        var result = FenceQueryResult()
        store.query(point, within: searchRadiusMeters, wantNearest: true, into: &result)
        return result
    }

    /// As `query(_:within:)`, reusing `result`'s storage (no allocation in steady state).
    public func query(_ point: Coordinate, within searchRadiusMeters: Double, into result: inout FenceQueryResult) {
        store.query(point, within: searchRadiusMeters, wantNearest: true, into: &result)
    }

    /// Batch query: answers `query(_:within:)` for every point of `points` and calls
    /// `body(i, result)` once per point with its position `i` in `points` and the same result
    /// a single query gives. Points are answered in spatial (Z-)order, not input order, so
    /// that consecutive queries find the index data they need still in the cache; `result` is
    /// only valid during the call. The ordering costs one radix sort (included in any timing).
    public func query(points: [Coordinate], within searchRadiusMeters: Double = .infinity,
                      body: (_ index: Int, _ result: FenceQueryResult) -> Void) {
        points.withUnsafeBufferPointer { buffer in
            let order = store.spatialOrder(of: buffer)
            // Gathered first in one loop of independent loads, then read in sequence.
            let sorted = order.map { buffer[Int($0)] }
            sorted.withUnsafeBufferPointer { points in
                store.queryPipelined(points, within: searchRadiusMeters) { j, result in body(Int(order[j]), result) }
            }
        }
    }

    /// Batch query returning the results in input order (see `query(points:within:body:)`).
    public func query(points: [Coordinate], within searchRadiusMeters: Double = .infinity) -> [FenceQueryResult] {
        var results = [FenceQueryResult](repeating: FenceQueryResult(), count: points.count)
        query(points: points, within: searchRadiusMeters) { i, result in results[i] = result }
        return results
    }
}
