import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// The input made safe to draw: invalid coordinates dropped, everything sorted by time
/// (stably), receiver intervals derived when missing, and the run's time span and extent.
struct NormalizedRun {
    let title: String
    let fences: [Fence]
    let track: [RunPicture.TrackPoint]
    let intervals: [RunPicture.ReceiverInterval]
    let events: [GeoEvent]
    let baseline: [GeoEvent]?
    let start: UTCTime
    let end: UTCTime
    /// The box to fit the map to: track and events, else fences, nil when there is nothing.
    let dataBox: GeoBox?
    /// How many valid points the whole track had (`track` may hold only those drawn).
    let trackCount: Int
    /// The modes in effect (`modes:`), from the run's `mode` events: each from its switch to
    /// the next (the first from the run's start); empty without mode events.
    let modeSpans: [(start: UTCTime, end: UTCTime, name: String)]

    init(_ input: RunPicture.Input, stats: inout RunPicture.Stats) {
        title = input.title
        stats.fencesInput = input.fences.count
        stats.trackPointsInput = input.totals?.count ?? input.track.count
        var valid = input.track.filter { $0.coordinate.isValid }
        stats.trackPointsInvalid = input.totals?.invalid ?? input.track.count - valid.count
        trackCount = stats.trackPointsInput - stats.trackPointsInvalid
        // One continuous longitude frame around the data (a voyage across ±180° stays in one
        // piece): every longitude within 180° of the data's circular mean.
        // Mode changes have their own row, not a marker.
        let modeEvents = input.events.filter { $0.kind == .mode }
        var events = input.events.filter { $0.coordinate.isValid && $0.kind != .mode }
        var baselineEvents = input.baselineEvents?.filter { $0.coordinate.isValid }
        let reference = (input.totals.map { $0.referenceLongitude } ?? Self.meanLongitude(valid.map(\.coordinate) + events.map(\.coordinate)))
            ?? Self.meanLongitude(input.fences.compactMap { $0.shape.flatMap(Self.anyPoint) })
        var fences = input.fences
        if let reference {
            for k in valid.indices { valid[k].coordinate = Self.unwrap(valid[k].coordinate, around: reference) }
            for k in events.indices { events[k].coordinate = Self.unwrap(events[k].coordinate, around: reference) }
            if baselineEvents != nil {
                for k in baselineEvents!.indices { baselineEvents![k].coordinate = Self.unwrap(baselineEvents![k].coordinate, around: reference) }
            }
            for k in fences.indices { fences[k].shape = fences[k].shape.map { Self.unwrap($0, around: reference) } }
        }
        self.fences = fences
        track = Self.sortedStably(valid, by: \.time)
        let intervalsIn = input.receiverIntervals.filter { $0.end >= $0.start }
        intervals = intervalsIn.isEmpty
            ? RunPicture.receiverIntervals(from: track)
            : Self.sortedStably(intervalsIn, by: \.start)
        self.events = Self.sortedStably(events, by: \.time)
        baseline = baselineEvents.map { Self.sortedStably($0, by: \.time) }

        var times: [UTCTime] = []
        if let first = track.first, let last = track.last { times += [first.time, last.time] }
        if let first = intervals.first { times.append(first.start) }
        if let last = intervals.last { times.append(last.end) }
        for list in [events, baseline ?? []] {
            if let first = list.first, let last = list.last { times += [first.time, last.time] }
        }
        start = times.min() ?? UTCTime(millisecondsSince1970: 0)
        end = times.max() ?? UTCTime(millisecondsSince1970: 0)
        var spans: [(start: UTCTime, end: UTCTime, name: String)] = []
        var current = (since: start, name: modeEvents.first?.figures?.modeFrom ?? ModeRule.fallbackName)
        for event in Self.sortedStably(modeEvents, by: \.time) {
            let at = min(max(event.time, start), end)
            if at > current.since { spans.append((current.since, at, current.name)) }
            current = (at, event.figures?.mode ?? ModeRule.fallbackName)
        }
        if !modeEvents.isEmpty, end > current.since { spans.append((current.since, end, current.name)) }
        modeSpans = spans

        let located = track.lazy.map(\.coordinate) + events.map(\.coordinate) + (baseline ?? []).map(\.coordinate)
        if let box = GeoBox(located) {
            dataBox = box
        } else {
            var fenceBox: GeoBox?
            for fence in fences {
                guard let shape = fence.shape, let b = FenceGeometry.box(of: shape) else { continue }
                if fenceBox == nil { fenceBox = b } else {
                    fenceBox?.include(Coordinate(latitude: b.minLatitude, longitude: b.minLongitude))
                    fenceBox?.include(Coordinate(latitude: b.maxLatitude, longitude: b.maxLongitude))
                }
            }
            dataBox = fenceBox
        }
    }

    /// The circular mean of the longitudes, nil without points.
    static func meanLongitude(_ points: [Coordinate]) -> Double? {
        var mean = MeanLongitude()
        for p in points { mean.add(p) }
        return mean.value
    }

    static func unwrap(_ c: Coordinate, around reference: Double) -> Coordinate {
        Coordinate(latitude: c.latitude, longitude: reference + Geodesy.longitudeDelta(reference, c.longitude))
    }

    static func unwrap(_ shape: FenceShape, around reference: Double) -> FenceShape {
        switch shape {
        case let .circle(center, radius):
            return .circle(center: unwrap(center, around: reference), radiusMeters: radius)
        case let .polygons(members):
            return .polygons(members.map { m in
                PolygonRings(shell: m.shell.map { unwrap($0, around: reference) }, holes: m.holes.map { $0.map { unwrap($0, around: reference) } })
            })
        case let .corridor(lines, width):
            return .corridor(lines: lines.map { $0.map { unwrap($0, around: reference) } }, widthMeters: width)
        }
    }

    static func anyPoint(_ shape: FenceShape) -> Coordinate? {
        switch shape {
        case let .circle(center, _): center
        case let .polygons(members): members.first?.shell.first
        case let .corridor(lines, _): lines.first?.first
        }
    }

    var spanMilliseconds: Int64 { end.millisecondsSince1970 - start.millisecondsSince1970 }

    /// One line under the title: when, how long, how much, and how often the receiver was on.
    var summary: String {
        guard spanMilliseconds > 0 || !track.isEmpty || !events.isEmpty else { return "no track, no events" }
        var parts: [String] = []
        let startText = String(start.rfc3339.compactMap { $0 == "T" ? " " : ($0 == "Z" ? nil : $0) })
        let endText = String(end.rfc3339.compactMap { $0 == "T" ? " " : ($0 == "Z" ? nil : $0) })
        let sameDay = startText.prefix(10) == endText.prefix(10)
        parts.append("\(startText) – \(sameDay ? String(endText.dropFirst(11)) : endText) UTC, GNSS time (\(TimeAxis.duration(milliseconds: spanMilliseconds)))")
        parts.append("\(trackCount) fix\(trackCount == 1 ? "" : "es")")
        var onMs: Int64 = 0, totalMs: Int64 = 0
        for i in intervals where i.state != .unknown {
            let ms = i.end.millisecondsSince1970 - i.start.millisecondsSince1970
            totalMs += ms
            if i.state.isPowered { onMs += ms }
        }
        if totalMs > 0 {
            let percent = Double(onMs) / Double(totalMs) * 100
            parts.append("receiver on \(SVGWriter.n(percent))% of the time")
        } else if receiverUnknown {
            parts.append("receiver state not recorded")
        }
        let wakes = wakeIndices.count
        if wakes > 0 { parts.append("\(wakes) wake\(wakes == 1 ? "" : "s")") }
        parts.append("\(events.count) event\(events.count == 1 ? "" : "s")")
        if let baseline { parts.append("always-on: \(baseline.count)") }
        parts.append("\(fences.count) fence\(fences.count == 1 ? "" : "s")")
        return parts.joined(separator: " · ")
    }

    /// Indices of intervals where the receiver powers up after being off (the first interval
    /// counts when powered and it has a reason: a derived interval is no wake).
    var wakeIndices: [Int] {
        intervals.indices.filter { i in
            intervals[i].state.isPowered && (i == 0 ? !intervals[i].reason.isEmpty : intervals[i - 1].state == .off)
        }
    }

    /// True when nothing says whether the receiver was on (every interval is `.unknown`).
    var receiverUnknown: Bool {
        !intervals.isEmpty && intervals.allSatisfy { $0.state == .unknown }
    }

    /// Index of the track point nearest in time to `t`, nil without a track.
    func trackIndex(nearest t: UTCTime) -> Int? {
        guard !track.isEmpty else { return nil }
        var lo = 0, hi = track.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if track[mid].time < t { lo = mid + 1 } else { hi = mid }
        }
        if lo == track.count { return track.count - 1 }
        if lo > 0, t.millisecondsSince1970 - track[lo - 1].time.millisecondsSince1970 <= track[lo].time.millisecondsSince1970 - t.millisecondsSince1970 {
            return lo - 1
        }
        return lo
    }

    private static func sortedStably<T>(_ items: [T], by key: (T) -> UTCTime) -> [T] {
        var isSorted = true
        for i in items.indices.dropFirst() where key(items[i]) < key(items[i - 1]) {
            isSorted = false
            break
        }
        if isSorted { return items }
        return items.enumerated()
            .sorted { a, b in
                let ka = key(a.element), kb = key(b.element)
                return ka != kb ? ka < kb : a.offset < b.offset
            }
            .map(\.element)
    }
}
