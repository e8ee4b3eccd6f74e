import GeomonCore
import GeomonFormat

#if canImport(Glibc)
import Glibc
#endif

/// The map: fences, the track by receiver state, wake points, events, scale bar, north arrow
/// and legend, in an equirectangular projection fitted to the run.
struct MapLayer {
    let run: NormalizedRun
    let projection: MapProjection
    let options: RunPicture.Options
    private var labels: LabelPlacer
    /// Screen positions of the track (same indices as `run.track`).
    private let screen: [ScreenPoint]
    /// 16-pixel cells the drawn track passes through, for "near the track" questions.
    private var trackCells: Set<Int> = []
    private static let cellSize = 16.0

    init(run: NormalizedRun, projection: MapProjection, options: RunPicture.Options) {
        self.run = run
        self.projection = projection
        self.options = options
        let r = projection.rect
        labels = LabelPlacer(bounds: .init(x0: r.x + 2, y0: r.y + 2, x1: r.x + r.width - 2, y1: r.y + r.height - 2))
        screen = run.track.map { projection.project($0.coordinate) }
    }

    mutating func draw(into w: inout SVGWriter, stats: inout RunPicture.Stats) {
        let r = projection.rect
        let n = SVGWriter.n
        w.line("<defs><clipPath id=\"map-clip\"><rect x=\"\(n(r.x))\" y=\"\(n(r.y))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\"/></clipPath></defs>")
        w.line("<rect class=\"frame\" x=\"\(n(r.x))\" y=\"\(n(r.y))\" width=\"\(n(r.width))\" height=\"\(n(r.height))\"/>")

        let legendBox = legendSize()
        labels.reserve(.init(x0: r.x, y0: r.y, x1: r.x + legendBox.width + 10, y1: r.y + legendBox.height + 10))
        labels.reserve(.init(x0: r.x + r.width - 44, y0: r.y, x1: r.x + r.width, y1: r.y + 56)) // north arrow
        labels.reserve(.init(x0: r.x, y0: r.y + r.height - 40, x1: r.x + 220, y1: r.y + r.height)) // scale bar

        w.line("<g clip-path=\"url(#map-clip)\">")
        let trackLines = thinnedTrack()
        for line in trackLines {
            for i in line.indices { trackCells.insert(cell(screen[i])) }
        }
        let fenceLabels = drawFences(into: &w, stats: &stats)
        // One path per receiver state, one subpath per run: few elements however often the
        // state changes.
        for cls in ["unseen", "off", "unknown", "acquiring", "on"] {
            var d = ""
            for line in trackLines where line.cls == cls {
                for (k, i) in line.indices.enumerated() {
                    d += (k == 0 ? "M" : (k == 1 ? "L" : " ")) + n(screen[i].x) + " " + n(screen[i].y)
                }
                stats.trackPointsDrawn += line.indices.count
            }
            if !d.isEmpty { w.line("<path class=\"trk trk-\(cls)\" d=\"\(d)\"/>") }
        }
        let wakes = drawWakes(into: &w, stats: &stats)
        let markers = drawEvents(into: &w, stats: &stats)
        w.line("</g>")

        // Labels after all shapes, most important first: events, missed events, wakes, fences.
        w.line("<g class=\"labels\">")
        for m in markers { labels.reserve(.init(x0: m.point.x - 6, y0: m.point.y - 6, x1: m.point.x + 6, y1: m.point.y + 6)) }
        if wakes.count <= 100 {
            for m in wakes { labels.reserve(.init(x0: m.point.x - 4, y0: m.point.y - 4, x1: m.point.x + 4, y1: m.point.y + 4)) }
        }
        var eventLabelCount = 0
        for m in markers where m.label != nil && eventLabelCount < options.maxEventLabels {
            if placeLabel(m.label ?? "", near: m.point, radius: 7, cls: m.cls, into: &w) { eventLabelCount += 1 }
        }
        stats.eventLabels = eventLabelCount
        for f in fenceLabels where stats.fenceLabels < options.maxFenceLabels {
            let width = SVGWriter.textWidth(f.text, size: 11)
            let boxes = f.anchors.map { a -> LabelPlacer.Box in
                let x0 = a.anchor == "start" ? a.point.x : (a.anchor == "end" ? a.point.x - width : a.point.x - width / 2)
                return LabelPlacer.Box(x0: x0, y0: a.point.y - 11, x1: x0 + width, y1: a.point.y + 2)
            }
            if let k = labels.place(boxes) {
                w.label(f.text, x: f.anchors[k].point.x, y: f.anchors[k].point.y, anchor: f.anchors[k].anchor, cls: "fence-label halo")
                stats.fenceLabels += 1
            }
        }
        if run.wakeIndices.count <= options.maxWakeLabels {
            for m in wakes where !(m.label ?? "").isEmpty {
                _ = placeLabel(m.label ?? "", near: m.point, radius: 6, cls: "muted", size: 10, into: &w)
            }
        }
        w.line("</g>")

        if run.dataBox == nil {
            w.label("nothing to draw: no track, events or fences", x: r.x + r.width / 2, y: r.y + r.height / 2, size: 12, anchor: "middle", cls: "muted")
        }
        drawScaleBar(into: &w)
        drawNorthArrow(into: &w)
        drawLegend(into: &w, size: legendBox, stats: stats)
    }

    private func cell(_ p: ScreenPoint) -> Int {
        Int((p.y / Self.cellSize).rounded(.down)) * 10_000 + Int((p.x / Self.cellSize).rounded(.down))
    }

    // MARK: Track

    struct Line {
        var cls: String
        /// Indices into `run.track`.
        var indices: [Int]
    }

    /// Polylines by receiver state, thinned by screen distance. State changes and the fixes
    /// nearest to events are always kept.
    func thinnedTrack() -> [Line] {
        let track = run.track
        guard !track.isEmpty else { return [] }
        var keep = [Bool](repeating: false, count: track.count)
        for event in run.events + (run.baseline ?? []) {
            if let i = run.trackIndex(nearest: event.time) { keep[i] = true }
        }
        var runs: [(state: RunPicture.ReceiverState, range: Range<Int>)] = []
        var start = 0
        for i in 1...track.count where i == track.count || track[i].receiver != track[start].receiver {
            runs.append((track[start].receiver, start..<i))
            start = i
        }
        let spacing = options.minPointSpacingPixels
        func thin(_ range: Range<Int>, alsoKeep: Range<Int>? = nil) -> [Int] {
            let slice = Array(screen[range])
            let base = range.lowerBound
            let first = alsoKeep?.lowerBound ?? -1, last = (alsoKeep?.upperBound ?? 0) - 1
            return TrackThinner.thin(slice, minSpacing: spacing, mustKeep: { i in
                keep[base + i] || base + i == first || base + i == last
            }).map { base + $0 }
        }
        var unseen: [Line] = [], gaps: [Line] = [], seen: [Line] = []
        for (k, r) in runs.enumerated() {
            let before = r.range.lowerBound - 1
            let after = r.range.upperBound
            if r.state == .off {
                // What the device missed (recorded), and the straight line it assumed.
                let from = before >= 0 ? before : r.range.lowerBound
                let to = after < track.count ? after + 1 : after
                unseen.append(Line(cls: "unseen", indices: thin(from..<to, alsoKeep: r.range)))
                if before >= 0, after < track.count {
                    gaps.append(Line(cls: "off", indices: [before, after]))
                }
            } else {
                var indices = thin(r.range)
                if k > 0, runs[k - 1].state != .off, before >= 0 { indices.insert(before, at: 0) }
                if indices.count == 1 { indices.append(indices[0]) }
                seen.append(Line(cls: r.state.rawValue, indices: indices))
            }
        }
        return unseen + gaps + seen
    }

    // MARK: Fences

    private struct FenceLabel {
        var text: String
        /// Candidate positions in order of preference, with their text-anchor.
        var anchors: [(point: ScreenPoint, anchor: String)]
    }

    /// Draws the fences in view and returns label candidates in priority order.
    private func drawFences(into w: inout SVGWriter, stats: inout RunPicture.Stats) -> [FenceLabel] {
        let view = projection.visibleBox
        var visible: [(fence: Fence, box: GeoBox, index: Int)] = []
        for (i, fence) in run.fences.enumerated() {
            guard let shape = fence.shape, let box = FenceGeometry.box(of: shape), box.intersects(view) else { continue }
            visible.append((fence, box, i))
        }
        stats.fencesCulled = run.fences.count - visible.count
        let crowded = visible.count > options.detailedFenceLimit
        var withEvents = Set<String>()
        for e in run.events + (run.baseline ?? []) { if let id = e.fenceID { withEvents.insert(id) } }

        var candidates: [(priority: Int, index: Int, label: FenceLabel)] = []
        var dotCells = Set<Int>()
        var vertexCount = 0
        let n = SVGWriter.n
        for item in visible {
            let a = projection.project(Coordinate(latitude: item.box.maxLatitude, longitude: item.box.minLongitude))
            let b = projection.project(Coordinate(latitude: item.box.minLatitude, longitude: item.box.maxLongitude))
            let sizePixels = max(b.x - a.x, b.y - a.y)
            let center = ScreenPoint(x: (a.x + b.x) / 2, y: (a.y + b.y) / 2)
            let title = "<title>\(SVGWriter.escape(item.fence.id))</title>"
            var drewDot = false
            var outline: [ScreenPoint] = []
            if sizePixels < 2 || (crowded && sizePixels < 5) {
                // Too small to read as a shape: a dot, one per 2-pixel cell.
                let key = Int((center.y / 2).rounded(.down)) * 100_000 + Int((center.x / 2).rounded(.down))
                if dotCells.insert(key).inserted {
                    w.line("<circle class=\"fence-dot\" cx=\"\(n(center.x))\" cy=\"\(n(center.y))\" r=\"1.6\">\(title)</circle>")
                    stats.fenceDots += 1
                }
                drewDot = true
            } else {
                switch item.fence.shape ?? .polygons([]) {
                case let .circle(c, radiusMeters):
                    let p = projection.project(c)
                    let ry = radiusMeters / projection.metersPerPixel
                    let rx = ry * projection.xScale / max(cos(c.latitude * Double.pi / 180), 0.01)
                    w.line("<ellipse class=\"fence\" cx=\"\(n(p.x))\" cy=\"\(n(p.y))\" rx=\"\(n(rx))\" ry=\"\(n(ry))\">\(title)</ellipse>")
                case let .polygons(polygons):
                    let d = FenceGeometry.pathData(polygons, projection: projection, minSpacing: 0.8, stats: &vertexCount, vertices: &outline)
                    guard !d.isEmpty else { continue }
                    w.line("<path class=\"fence\" d=\"\(d)\">\(title)</path>")
                case let .corridor(lines, widthMeters):
                    // The band as a stroke as wide as the corridor (at least 2 px), its line inside.
                    let d = FenceGeometry.linePathData(lines, projection: projection, minSpacing: 0.8, stats: &vertexCount)
                    guard !d.isEmpty else { continue }
                    let width = max(2, widthMeters / projection.metersPerPixel)
                    w.line("<path class=\"corridor\" stroke-width=\"\(n(width))\" d=\"\(d)\">\(title)</path>")
                    w.line("<path class=\"corridor-line\" d=\"\(d)\"/>")
                }
                stats.fenceShapes += 1
            }

            // Label candidates: every fence when few are in view; when crowded only those with
            // events or near the track (big fences count as near).
            let hasEvent = withEvents.contains(item.fence.id)
            let near = sizePixels > 200 || isNearTrack(a, b)
            guard !crowded || hasEvent || near else { continue }
            let text = SVGWriter.shorten(item.fence.id)
            // Above, below, right, left of the shape (clear of markers on its edge), then inside.
            let r = projection.rect
            let cx = min(max(center.x, r.x + 40), r.x + r.width - 40)
            let cy = min(max(center.y + 4, r.y + 14), r.y + r.height - 4)
            let pad = drewDot ? 3.0 : 7.0
            // Then the same sides farther out and the corners, so a small fence crowded by its
            // own event markers and labels still finds room.
            var anchors: [(point: ScreenPoint, anchor: String)] = []
            for extra in [0.0, 12, 26] {
                let d = pad + extra
                anchors += [
                    (ScreenPoint(x: cx, y: max(a.y - d, r.y + 14)), "middle"),
                    (ScreenPoint(x: cx, y: min(b.y + d + 10, r.y + r.height - 4)), "middle"),
                    (ScreenPoint(x: b.x + d, y: cy), "start"),
                    (ScreenPoint(x: a.x - d, y: cy), "end"),
                ]
                if extra > 0 {
                    anchors += [
                        (ScreenPoint(x: b.x + d * 0.7, y: max(a.y - d * 0.7, r.y + 14)), "start"),
                        (ScreenPoint(x: a.x - d * 0.7, y: max(a.y - d * 0.7, r.y + 14)), "end"),
                        (ScreenPoint(x: b.x + d * 0.7, y: min(b.y + d * 0.7 + 10, r.y + r.height - 4)), "start"),
                        (ScreenPoint(x: a.x - d * 0.7, y: min(b.y + d * 0.7 + 10, r.y + r.height - 4)), "end"),
                    ]
                }
            }
            if !drewDot { anchors.append((ScreenPoint(x: cx, y: cy), "middle")) }
            // A fence larger than the view: beside its outline where the outline is in view.
            let inset = (x0: r.x + 40, y0: r.y + 20, x1: r.x + r.width - 40, y1: r.y + r.height - 20)
            let onScreen = outline.filter { $0.x > inset.x0 && $0.x < inset.x1 && $0.y > inset.y0 && $0.y < inset.y1 }
            if !onScreen.isEmpty {
                for k in 0..<min(8, onScreen.count) {
                    let p = onScreen[k * onScreen.count / min(8, onScreen.count)]
                    anchors += [(ScreenPoint(x: p.x, y: p.y - 5), "middle"), (ScreenPoint(x: p.x, y: p.y + 14), "middle")]
                }
            }
            candidates.append(((hasEvent ? 0 : 2) + (near ? 0 : 1), item.index, FenceLabel(text: text, anchors: anchors)))
        }
        return candidates.sorted { $0.priority != $1.priority ? $0.priority < $1.priority : $0.index < $1.index }.map(\.label)
    }

    /// True when the drawn track passes within one cell of the screen box a–b.
    private func isNearTrack(_ a: ScreenPoint, _ b: ScreenPoint) -> Bool {
        let s = Self.cellSize
        let x0 = Int((min(a.x, b.x) / s).rounded(.down)) - 1, x1 = Int((max(a.x, b.x) / s).rounded(.down)) + 1
        let y0 = Int((min(a.y, b.y) / s).rounded(.down)) - 1, y1 = Int((max(a.y, b.y) / s).rounded(.down)) + 1
        for y in y0...y1 {
            for x in x0...x1 where trackCells.contains(y * 10_000 + x) { return true }
        }
        return false
    }

    // MARK: Wakes and events

    private struct Marker {
        var point: ScreenPoint
        var label: String?
        var cls: String
    }

    /// A diamond where the receiver powered up, labelled with the policy's reason. Wakes on
    /// top of an earlier one (same 6-pixel cell) are not drawn again: a week of wakes stays a
    /// readable scatter, and the timeline still shows each one.
    private func drawWakes(into w: inout SVGWriter, stats: inout RunPicture.Stats) -> [Marker] {
        var markers: [Marker] = []
        var cells = Set<Int>()
        let n = SVGWriter.n
        for i in run.wakeIndices {
            let interval = run.intervals[i]
            guard let k = run.trackIndex(nearest: interval.start) else { break }
            let p = screen[k]
            guard cells.insert(Int((p.y / 6).rounded(.down)) * 100_000 + Int((p.x / 6).rounded(.down))).inserted else { continue }
            w.line("<path class=\"wake\" d=\"M\(n(p.x)) \(n(p.y - 4))l3.2 4l-3.2 4l-3.2 -4Z\"><title>\(SVGWriter.escape("wake \(interval.start.rfc3339): \(interval.reason)"))</title></path>")
            markers.append(Marker(point: p, label: SVGWriter.shorten(interval.reason, limit: 36), cls: "muted"))
        }
        stats.wakeMarkers = markers.count
        return markers
    }

    /// Filled markers for the run's events, hollow ones for the always-on baseline. Baseline
    /// events the run did not also report (same kind and fence) get a label: they were missed.
    private func drawEvents(into w: inout SVGWriter, stats: inout RunPicture.Stats) -> [Marker] {
        let n = SVGWriter.n
        let span = run.spanMilliseconds
        var markers: [Marker] = []
        var reported = Set<String>()
        for e in run.events { reported.insert("\(e.kind.rawValue)|\(e.fenceID ?? "")") }
        // One marker per kind and 3-pixel cell (run and baseline apart): thousands of events
        // on one spot draw once.
        var cells = Set<String>()
        func firstHere(_ prefix: String, _ e: GeoEvent, _ p: ScreenPoint) -> Bool {
            cells.insert("\(prefix)\(e.kind.rawValue)|\(Int((p.x / 3).rounded(.down)))|\(Int((p.y / 3).rounded(.down)))").inserted
        }
        for e in run.baseline ?? [] {
            let p = projection.project(e.coordinate)
            guard firstHere("b", e, p) else { continue }
            w.line("<circle class=\"bl bl-\(e.kind.rawValue)\" cx=\"\(n(p.x))\" cy=\"\(n(p.y))\" r=\"7.5\"><title>\(SVGWriter.escape("always-on: " + Self.describe(e, span: span)))</title></circle>")
            stats.baselineMarkers += 1
            let missed = !reported.contains("\(e.kind.rawValue)|\(e.fenceID ?? "")")
            if missed { markers.append(Marker(point: p, label: "always-on: " + Self.describe(e, span: span), cls: "muted")) }
        }
        var eventMarkers: [Marker] = []
        for e in run.events {
            let p = projection.project(e.coordinate)
            guard firstHere("r", e, p) else { continue }
            w.line("<circle class=\"ev ev-\(e.kind.rawValue)\" cx=\"\(n(p.x))\" cy=\"\(n(p.y))\" r=\"5\"><title>\(SVGWriter.escape(Self.describe(e, span: span) + " — " + e.rule.text))</title></circle>")
            stats.eventMarkers += 1
            eventMarkers.append(Marker(point: p, label: Self.describe(e, span: span), cls: "event-label"))
        }
        return eventMarkers + markers
    }

    /// "enter home 12:03" — type, fence and time.
    static func describe(_ e: GeoEvent, span: Int64) -> String {
        let fence = e.fenceID.map { " " + SVGWriter.shorten($0, limit: 24) } ?? ""
        return "\(e.kind.rawValue)\(fence) \(TimeAxis.shortTime(e.time, span: span))"
    }

    /// Places a label right, left, above or below a point, whichever is free first.
    private mutating func placeLabel(_ text: String, near p: ScreenPoint, radius: Double, cls: String, size: Double = 11, into w: inout SVGWriter) -> Bool {
        let width = SVGWriter.textWidth(text, size: size)
        let h = size + 2
        let options: [(box: LabelPlacer.Box, x: Double, y: Double, anchor: String)] = [
            (.init(x0: p.x + radius, y0: p.y - h / 2, x1: p.x + radius + width, y1: p.y + h / 2), p.x + radius, p.y + size * 0.35, "start"),
            (.init(x0: p.x - radius - width, y0: p.y - h / 2, x1: p.x - radius, y1: p.y + h / 2), p.x - radius, p.y + size * 0.35, "end"),
            (.init(x0: p.x - width / 2, y0: p.y - radius - h, x1: p.x + width / 2, y1: p.y - radius), p.x, p.y - radius - 3, "middle"),
            (.init(x0: p.x - width / 2, y0: p.y + radius, x1: p.x + width / 2, y1: p.y + radius + h), p.x, p.y + radius + size, "middle"),
        ]
        guard let k = labels.place(options.map(\.box)) else { return false }
        let o = options[k]
        w.label(text, x: o.x, y: o.y, size: size, anchor: o.anchor, cls: "\(cls) halo")
        return true
    }

    // MARK: Furniture

    private func drawScaleBar(into w: inout SVGWriter) {
        let r = projection.rect
        let n = SVGWriter.n
        let bar = ScaleBar.length(metersPerPixel: projection.metersPerPixel, maxPixels: r.width / 5)
        let length = bar.meters / projection.metersPerPixel
        let x = r.x + 14, y = r.y + r.height - 18
        w.line("<g class=\"scalebar\">")
        w.line("<rect class=\"scale\" x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(length / 2))\" height=\"5\"/>")
        w.line("<rect class=\"scale-alt\" x=\"\(n(x + length / 2))\" y=\"\(n(y))\" width=\"\(n(length / 2))\" height=\"5\"/>")
        w.label("0", x: x, y: y - 4, size: 10, anchor: "middle", cls: "halo")
        w.label(bar.text, x: x + length, y: y - 4, size: 10, anchor: "middle", cls: "scale-text halo")
        w.line("</g>")
    }

    private func drawNorthArrow(into w: inout SVGWriter) {
        let r = projection.rect
        let n = SVGWriter.n
        let x = r.x + r.width - 22, y = r.y + 14
        w.line("<g class=\"north-arrow\"><path class=\"north\" d=\"M\(n(x)) \(n(y))l8 22l-8 -6l-8 6Z\"/>")
        w.label("N", x: x, y: y + 36, size: 11, anchor: "middle", cls: "halo")
        w.line("</g>")
    }

    private func legendEntries() -> [(kind: String, text: String)] {
        var entries: [(String, String)] = []
        if run.track.contains(where: { $0.receiver == .on }) || run.track.isEmpty { entries.append(("on", "receiver on")) }
        if run.track.contains(where: { $0.receiver == .acquiring }) { entries.append(("acquiring", "acquiring fix")) }
        if run.track.contains(where: { $0.receiver == .unknown }) { entries.append(("unknown", "fixes (receiver not recorded)")) }
        let hasOff = run.track.contains { $0.receiver == .off }
        if hasOff { entries += [("off", "off: assumed straight"), ("unseen", "off: path not seen")] }
        if !run.intervals.isEmpty, !run.wakeIndices.isEmpty { entries.append(("wake", "receiver woke (reason)")) }
        if !run.fences.isEmpty { entries.append(("fence", "fence")) }
        var kinds = Set(run.events.map(\.kind))
        for e in run.baseline ?? [] { kinds.insert(e.kind) }
        for kind in EventKind.allCases where kinds.contains(kind) { entries.append(("ev-\(kind.rawValue)", "\(kind.rawValue) event")) }
        if !(run.baseline ?? []).isEmpty { entries.append(("bl", "always-on event (hollow)")) }
        return entries
    }

    private func legendSize() -> (width: Double, height: Double) {
        (168, Double(legendEntries().count) * 15 + 8)
    }

    private func drawLegend(into w: inout SVGWriter, size: (width: Double, height: Double), stats: RunPicture.Stats) {
        let r = projection.rect
        let n = SVGWriter.n
        let x = r.x + 6, y0 = r.y + 6
        w.line("<g class=\"legend-box\">")
        w.line("<rect class=\"legend\" x=\"\(n(x))\" y=\"\(n(y0))\" width=\"\(n(size.width))\" height=\"\(n(size.height))\" rx=\"3\"/>")
        for (i, entry) in legendEntries().enumerated() {
            let y = y0 + 12 + Double(i) * 15
            let sx = x + 8
            switch entry.kind {
            case "on", "acquiring", "off", "unseen", "unknown":
                w.line("<line class=\"trk trk-\(entry.kind) key\" x1=\"\(n(sx))\" y1=\"\(n(y - 3))\" x2=\"\(n(sx + 22))\" y2=\"\(n(y - 3))\"/>")
            case "wake":
                w.line("<path class=\"wake key\" d=\"M\(n(sx + 11)) \(n(y - 8))l4 5l-4 5l-4 -5Z\"/>")
            case "fence":
                w.line("<rect class=\"fence key\" x=\"\(n(sx + 3))\" y=\"\(n(y - 8))\" width=\"16\" height=\"10\"/>")
            case "bl":
                w.line("<circle class=\"bl bl-location key\" cx=\"\(n(sx + 11))\" cy=\"\(n(y - 3))\" r=\"5\"/>")
            default:
                w.line("<circle class=\"ev \(entry.kind) key\" cx=\"\(n(sx + 11))\" cy=\"\(n(y - 3))\" r=\"4.5\"/>")
            }
            w.label(entry.text, x: sx + 30, y: y, size: 10.5)
        }
        w.line("</g>")
        if stats.fencesInput > options.detailedFenceLimit || stats.fenceDots > 0 {
            let note = "\(stats.fencesInput - stats.fencesCulled) fences in view (\(stats.fenceDots) as dots), \(stats.fenceLabels) labelled"
            w.label(note, x: r.x + r.width - 8, y: r.y + r.height - 8, size: 10, anchor: "end", cls: "muted halo")
        }
    }
}
