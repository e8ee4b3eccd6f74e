public import GeomonCore

#if canImport(Glibc)
import Glibc
#endif

extension RunPicture {
    /// What a reduced input's track stood for: the whole track's point counts and the longitude
    /// its coordinates are unwrapped around (`reducedInput`).
    public struct TrackTotals: Hashable, Sendable {
        /// Points read, with invalid coordinates.
        public var count: Int
        /// Points with invalid coordinates (not drawn).
        public var invalid: Int
        /// The circular mean longitude of the valid points and the valid events; nil without any.
        public var referenceLongitude: Double?
    }

    /// The input for a track too long to hold, read in three passes, each a new reading of the
    /// same points in time order (`track(withDistances, body)` hands each to `body`; distances
    /// are asked for only in the last): the first finds the longitude to unwrap around, the second the map's box and the
    /// time span, the third keeps only the points the picture uses — the ones the map's thinning
    /// keeps, the distance chart's first, lowest, highest and last point of each pixel column
    /// and each break in it, the points nearest to events and to wakes, the first point at each
    /// edge of the box. Rendered with the same options, it draws the same picture, byte for
    /// byte, as the whole track does, in memory bounded by what is drawn. A track out of time
    /// order is read whole and given as it is.
    public static func reducedInput(
        title: String,
        fences: [Fence] = [],
        receiverIntervals: [ReceiverInterval] = [],
        events: [GeoEvent] = [],
        baselineEvents: [GeoEvent]? = nil,
        options: Options = Options(),
        track: (_ withDistances: Bool, _ body: (TrackPoint) -> Void) throws -> Void
    ) rethrows -> Input {
        var input = Input(title: title, fences: fences, receiverIntervals: receiverIntervals, events: events, baselineEvents: baselineEvents)
        let validEvents = events.filter { $0.coordinate.isValid }

        // Pass 1: counts, order, and the mean longitude (valid points, then valid events, in the
        // order NormalizedRun adds them).
        var count = 0, invalid = 0
        var mean = MeanLongitude()
        var previous: UTCTime?
        var sorted = true
        try track(false) { point in
            count += 1
            guard point.coordinate.isValid else {
                invalid += 1
                return
            }
            if let previous, point.time < previous { sorted = false }
            previous = point.time
            mean.add(point.coordinate)
        }
        guard sorted else {
            var all: [TrackPoint] = []
            try track(true) { all.append($0) }
            input.track = all
            return input
        }
        for event in validEvents { mean.add(event.coordinate) }
        let totals = TrackTotals(count: count, invalid: invalid, referenceLongitude: mean.value)
        input.totals = totals

        // Pass 2: the first and last points, the first point on each edge of the box (unwrapped
        // as drawn), and the receiver's intervals when none are given (NormalizedRun would derive
        // the same from the whole track).
        var first: TrackPoint?, last: TrackPoint?
        var box: GeoBox?
        var edges: [(index: Int, point: TrackPoint)] = []
        var derived: [ReceiverInterval] = []
        let derive = receiverIntervals.filter { $0.end >= $0.start }.isEmpty
        var index = 0
        try track(false) { point in
            guard point.coordinate.isValid else { return }
            defer { index += 1 }
            if first == nil { first = point }
            last = point
            if derive {
                if let k = derived.indices.last, derived[k].state == point.receiver {
                    derived[k].end = point.time
                } else {
                    if let k = derived.indices.last { derived[k].end = point.time }
                    derived.append(ReceiverInterval(start: point.time, end: point.time, state: point.receiver))
                }
            }
            let c = totals.referenceLongitude.map { NormalizedRun.unwrap(point.coordinate, around: $0) } ?? point.coordinate
            guard var b = box else {
                box = GeoBox(minLatitude: c.latitude, maxLatitude: c.latitude, minLongitude: c.longitude, maxLongitude: c.longitude)
                edges = Array(repeating: (index, point), count: 4)
                return
            }
            if c.latitude < b.minLatitude { b.minLatitude = c.latitude; edges[0] = (index, point) }
            if c.latitude > b.maxLatitude { b.maxLatitude = c.latitude; edges[1] = (index, point) }
            if c.longitude < b.minLongitude { b.minLongitude = c.longitude; edges[2] = (index, point) }
            if c.longitude > b.maxLongitude { b.maxLongitude = c.longitude; edges[3] = (index, point) }
            box = b
        }
        if derive { input.receiverIntervals = derived }
        guard let first, let last else { return input }
        // A skeleton with the same span, box and intervals gives the same projection and axis.
        var skeleton = input
        skeleton.track = [first] + edges.sorted { $0.index < $1.index }.map(\.point) + [last]
        let drawing = clamped(options)
        var stats = Stats()
        let frame = NormalizedRun(skeleton, stats: &stats)
        let projection = mapProjection(frame, options: drawing)
        let axis = TimeAxis(start: frame.start, end: frame.end, x0: TimelineLayer.axisX0, x1: drawing.widthPixels - TimelineLayer.axisRightMargin)

        // Pass 3: what the layers use.
        var reducer = TrackReducer(
            projection: projection, axis: axis, spacing: drawing.minPointSpacingPixels, reference: totals.referenceLongitude,
            edges: Set(edges.map(\.index)), mustKeepTimes: (validEvents + (baselineEvents ?? []).filter { $0.coordinate.isValid }).map(\.time).sorted(),
            alsoKeepTimes: frame.intervals.map(\.start).sorted())
        try track(true) { point in
            if point.coordinate.isValid { reducer.add(point) }
        }
        input.track = reducer.finish()
        return input
    }

    /// `render`'s options as it draws with them (widths and spacing within their limits).
    static func clamped(_ options: Options) -> Options {
        var options = options
        options.widthPixels = min(max(options.widthPixels.isFinite ? options.widthPixels : 1000, 480), 8000)
        options.minPointSpacingPixels = min(max(options.minPointSpacingPixels.isFinite ? options.minPointSpacingPixels : 1.5, 0.5), 20)
        return options
    }
}

/// The circular mean of longitudes, added one at a time (`NormalizedRun.meanLongitude`).
struct MeanLongitude {
    private var x = 0.0, y = 0.0
    private var first: Double?

    mutating func add(_ c: Coordinate) {
        if first == nil { first = c.longitude }
        x += cos(c.longitude * Double.pi / 180)
        y += sin(c.longitude * Double.pi / 180)
    }

    var value: Double? {
        guard let first else { return nil }
        return x == 0 && y == 0 ? first : atan2(y, x) * 180 / Double.pi
    }
}

/// Pass 3 of `RunPicture.reducedInput`: the valid points in time order in, the points the layers
/// use out. Each rule is the layer's own, run as a stream:
/// - the map (`MapLayer.thinnedTrack`): each run of one receiver state keeps its first and last
///   point, and between them a point at least the spacing (on screen) from the last one kept or
///   nearest to an event; a point's fate is settled when the next one shows whether it ended
///   its run;
/// - the distance chart (`TimelineLayer`): per pixel column the first, lowest, highest and last
///   finite distance, and each point without one that follows one (it breaks the line);
/// - the points nearest in time to each event and each interval's start
///   (`NormalizedRun.trackIndex(nearest:)`: the earlier at equal distance);
/// - the first point on each edge of the box (found by pass 2).
/// Extra points change nothing the layers decide: thinning compares each point with the last
/// one kept, which the extra points are not unless the map keeps them too.
struct TrackReducer {
    let projection: MapProjection
    let axis: TimeAxis
    let spacing2: Double
    let reference: Double?
    let edges: Set<Int>
    let mustKeepTimes: [UTCTime]
    let alsoKeepTimes: [UTCTime]
    private var nextMustKeep = 0
    private var nextAlsoKeep = 0
    private var kept: [Int: RunPicture.TrackPoint] = [:]
    private var index = -1
    // The map.
    private var pending: (index: Int, point: RunPicture.TrackPoint, screen: ScreenPoint, mustKeep: Bool, first: Bool)?
    private var lastKept = ScreenPoint(x: 0, y: 0)
    // The chart.
    private var column = Int.min
    private var bucket: (first: (Int, Double, RunPicture.TrackPoint), low: (Int, Double, RunPicture.TrackPoint),
                         high: (Int, Double, RunPicture.TrackPoint), last: (Int, Double, RunPicture.TrackPoint))?
    private var previousFinite = false

    init(projection: MapProjection, axis: TimeAxis, spacing: Double, reference: Double?, edges: Set<Int>,
         mustKeepTimes: [UTCTime], alsoKeepTimes: [UTCTime]) {
        self.projection = projection
        self.axis = axis
        spacing2 = spacing * spacing
        self.reference = reference
        self.edges = edges
        self.mustKeepTimes = mustKeepTimes
        self.alsoKeepTimes = alsoKeepTimes
    }

    private mutating func keep(_ i: Int, _ point: RunPicture.TrackPoint) {
        kept[i] = point
    }

    mutating func add(_ point: RunPicture.TrackPoint) {
        index += 1
        let i = index
        let c = reference.map { NormalizedRun.unwrap(point.coordinate, around: $0) } ?? point.coordinate
        let screen = projection.project(c)
        // Nearest to an event or a wake: this point or the one before.
        var mustKeepThis = false
        func nearest(_ t: UTCTime) -> Bool {
            // True: this point; false: the one before.
            guard let before = pending else { return true }
            return !(t.millisecondsSince1970 - before.point.time.millisecondsSince1970 <= point.time.millisecondsSince1970 - t.millisecondsSince1970)
        }
        while nextMustKeep < mustKeepTimes.count, mustKeepTimes[nextMustKeep] <= point.time {
            if nearest(mustKeepTimes[nextMustKeep]) { mustKeepThis = true } else { pending?.mustKeep = true }
            nextMustKeep += 1
        }
        while nextAlsoKeep < alsoKeepTimes.count, alsoKeepTimes[nextAlsoKeep] <= point.time {
            if nearest(alsoKeepTimes[nextAlsoKeep]) { keep(i, point) } else if let before = pending { keep(before.index, before.point) }
            nextAlsoKeep += 1
        }
        // The map.
        var first = true
        if let before = pending {
            if before.point.receiver != point.receiver {
                keep(before.index, before.point)
            } else {
                first = false
                if !before.first {
                    let dx = before.screen.x - lastKept.x, dy = before.screen.y - lastKept.y
                    if dx * dx + dy * dy >= spacing2 || before.mustKeep {
                        keep(before.index, before.point)
                        lastKept = before.screen
                    }
                }
            }
        }
        if first {
            keep(i, point)
            lastKept = screen
        }
        pending = (i, point, screen, mustKeepThis, first)
        // The chart.
        if let d = point.nearestBoundaryMeters, d.isFinite {
            let col = Int(axis.x(point.time).rounded(.down))
            if col != column {
                flush()
                column = col
            }
            let entry = (i, d, point)
            if var b = bucket {
                if d < b.low.1 { b.low = entry }
                if b.high.1 < d { b.high = entry }
                b.last = entry
                bucket = b
            } else {
                bucket = (entry, entry, entry, entry)
            }
            previousFinite = true
        } else {
            flush()
            if previousFinite { keep(i, point) }
            column = Int.min
            previousFinite = false
        }
        // The box.
        if edges.contains(i) { keep(i, point) }
    }

    private mutating func flush() {
        guard let b = bucket else { return }
        for entry in [b.first, b.low, b.high, b.last] { keep(entry.0, entry.2) }
        bucket = nil
    }

    /// The kept points, in their order.
    mutating func finish() -> [RunPicture.TrackPoint] {
        if let last = pending {
            // The last point of the track; events after it are nearest to it.
            keep(last.index, last.point)
        }
        flush()
        return kept.sorted { $0.key < $1.key }.map(\.value)
    }
}
