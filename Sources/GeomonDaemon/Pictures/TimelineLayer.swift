import GeomonCore

#if canImport(Glibc)
import Glibc
#endif

/// The timeline under the map, one time axis for every row: receiver state (with reasons),
/// distance to the nearest fence boundary (signed log scale, 0 marked), the run's events and
/// the always-on baseline's events.
struct TimelineLayer {
    let run: NormalizedRun
    let top: Double
    let options: RunPicture.Options
    let axis: TimeAxis
    let labelX: Double

    static let bandHeight = 22.0
    static let chartHeight = 150.0
    static let eventRowHeight = 34.0
    static let axisHeight = 34.0
    static let gap = 10.0

    init(run: NormalizedRun, top: Double, width: Double, options: RunPicture.Options) {
        self.run = run
        self.top = top
        self.options = options
        labelX = 12
        axis = TimeAxis(start: run.start, end: run.end, x0: 160, x1: width - 24)
    }

    var height: Double {
        Self.bandHeight + Self.gap + Self.chartHeight + Self.gap + Self.eventRowHeight
            + (run.baseline == nil ? 0 : Self.eventRowHeight) + Self.axisHeight
    }

    private var bandTop: Double { top }
    private var chartTop: Double { top + Self.bandHeight + Self.gap }
    private var eventsTop: Double { chartTop + Self.chartHeight + Self.gap }
    private var baselineTop: Double { eventsTop + Self.eventRowHeight }
    private var axisTop: Double { eventsTop + Self.eventRowHeight * (run.baseline == nil ? 1 : 2) }

    func draw(into w: inout SVGWriter, stats: inout RunPicture.Stats) {
        let n = SVGWriter.n
        w.line("<g class=\"timeline\">")
        // Grid first, so everything else sits on top.
        let ticks = axis.ticks
        for t in ticks {
            let x = axis.x(t)
            w.line("<line class=\"grid\" x1=\"\(n(x))\" y1=\"\(n(bandTop))\" x2=\"\(n(x))\" y2=\"\(n(axisTop))\"/>")
        }
        drawBand(into: &w)
        drawDistance(into: &w, stats: &stats)
        drawEvents(run.events, hollow: false, top: eventsTop, title: "events", into: &w)
        if let baseline = run.baseline {
            drawEvents(baseline, hollow: true, top: baselineTop, title: "always-on", into: &w)
        }
        // Axis.
        w.line("<line class=\"axis\" x1=\"\(n(axis.x0))\" y1=\"\(n(axisTop))\" x2=\"\(n(axis.x1))\" y2=\"\(n(axisTop))\"/>")
        var previous: UTCTime?
        var lastRight = -Double.infinity
        for t in ticks {
            let x = axis.x(t)
            w.line("<line class=\"axis\" x1=\"\(n(x))\" y1=\"\(n(axisTop))\" x2=\"\(n(x))\" y2=\"\(n(axisTop + 4))\"/>")
            let text = axis.label(t, previous: previous)
            let half = SVGWriter.textWidth(text, size: 10.5) / 2
            // Keep the last label inside the picture.
            let cx = min(x, axis.x1 + 20 - half)
            if cx - half > lastRight + 4 {
                w.label(text, x: cx, y: axisTop + 16, size: 10.5, anchor: "middle", cls: "tick")
                lastRight = cx + half
                previous = t
            }
        }
        w.label("UTC", x: labelX, y: axisTop + 16, size: 10.5, cls: "muted")
        w.line("</g>")
    }

    struct Span {
        var x0: Double
        var x1: Double
        var first: RunPicture.ReceiverInterval
        var end: UTCTime
        var count: Int
        /// Time inside the merged intervals, for the share of the span they cover.
        var coveredMilliseconds: Int64

        /// Opacity for a merged span: the share of its time the state held (at least 0.25).
        var opacity: Double {
            let total = end.millisecondsSince1970 - first.start.millisecondsSince1970
            guard count > 1, total > 0 else { return 1 }
            return max(0.25, min(1, Double(coveredMilliseconds) / Double(total)))
        }

        var opacityAttribute: String {
            opacity < 1 ? " fill-opacity=\"\(SVGWriter.n(opacity))\"" : ""
        }
    }

    /// Intervals in `states` as pixel spans (at least 0.6 px wide). Spans that start within a
    /// pixel of the previous one's end merge, so a receiver flapping every second still gives
    /// at most a few rectangles per pixel column.
    func spans(of states: Set<RunPicture.ReceiverState>) -> [Span] {
        var out: [Span] = []
        for interval in run.intervals where states.contains(interval.state) {
            let x0 = axis.x(interval.start), x1 = max(axis.x(interval.end), x0 + 0.6)
            let covered = interval.end.millisecondsSince1970 - interval.start.millisecondsSince1970
            if var last = out.last, x0 <= last.x1 + 1 {
                last.x1 = max(last.x1, x1)
                last.end = max(last.end, interval.end)
                last.count += 1
                last.coveredMilliseconds += covered
                out[out.count - 1] = last
            } else {
                out.append(Span(x0: x0, x1: x1, first: interval, end: interval.end, count: 1, coveredMilliseconds: covered))
            }
        }
        return out
    }

    /// Receiver state as coloured spans, each with its reason as a tooltip and, when it fits,
    /// as text.
    private func drawBand(into w: inout SVGWriter) {
        let n = SVGWriter.n
        w.label("receiver", x: labelX, y: bandTop + 15, size: 11)
        w.line("<rect class=\"band-off\" x=\"\(n(axis.x0))\" y=\"\(n(bandTop))\" width=\"\(n(axis.x1 - axis.x0))\" height=\"\(n(Self.bandHeight))\"/>")
        for state in [RunPicture.ReceiverState.on, .acquiring] {
            for span in spans(of: [state]) {
                let first = span.first
                var tip = "\(state.rawValue) \(first.start.rfc3339) – \(span.end.rfc3339)"
                if span.count > 1 {
                    tip += " (\(span.count) spans, \(SVGWriter.n(span.opacity * 100))% of the time)"
                } else if !first.reason.isEmpty {
                    tip += ": " + first.reason
                }
                w.line("<rect class=\"band-\(state.rawValue)\" x=\"\(n(span.x0))\" y=\"\(n(bandTop))\" width=\"\(n(span.x1 - span.x0))\" height=\"\(n(Self.bandHeight))\"\(span.opacityAttribute)><title>\(SVGWriter.escape(tip))</title></rect>")
            }
        }
        // Reasons of off spans and wide on spans, where the text fits.
        for interval in run.intervals where !interval.reason.isEmpty {
            let x0 = axis.x(interval.start), x1 = axis.x(interval.end)
            let text = SVGWriter.shorten(interval.reason, limit: 40)
            guard SVGWriter.textWidth(text, size: 9.5) + 6 < x1 - x0 else { continue }
            w.label(text, x: x0 + 3, y: bandTop + 15, size: 9.5, cls: interval.state == .off ? "muted" : "band-text")
        }
    }

    /// Signed log scale: y grows with log10(1 + |d|), inside (negative) below the zero line.
    private func drawDistance(into w: inout SVGWriter, stats: inout RunPicture.Stats) {
        let n = SVGWriter.n
        let y0 = chartTop, h = Self.chartHeight
        w.label("distance to", x: labelX, y: y0 + 14, size: 11)
        w.label("nearest boundary", x: labelX, y: y0 + 28, size: 11)
        w.label("(log scale)", x: labelX, y: y0 + 42, size: 9.5, cls: "muted")
        // Light shading where the receiver was on, to read distance against wakes.
        for span in spans(of: [.on, .acquiring]) {
            w.line("<rect class=\"on-shade\" x=\"\(n(span.x0))\" y=\"\(n(y0))\" width=\"\(n(span.x1 - span.x0))\" height=\"\(n(h))\"/>")
        }
        let values = run.track.compactMap { p in p.nearestBoundaryMeters.flatMap { $0.isFinite ? $0 : nil } }
        guard let maxAbs = values.map(abs).max() else {
            w.label("no distance data", x: (axis.x0 + axis.x1) / 2, y: y0 + h / 2, size: 11, anchor: "middle", cls: "muted")
            return
        }
        let hasInside = values.contains { $0 < 0 }
        let topDecade = max(ceil(log10(1 + max(maxAbs, 10)) - 0.01), 1)
        let scale = (hasInside ? h / 2 : h - 8) / topDecade
        let zeroY = hasInside ? y0 + h / 2 : y0 + h - 4
        func y(_ d: Double) -> Double {
            let v = log10(1 + abs(d)) * scale
            return d < 0 ? zeroY + v : zeroY - v
        }
        // Decade ticks.
        var decade = 1.0
        while decade <= topDecade {
            let meters = pow(10, decade)
            let text = meters >= 1000 ? "\(SVGWriter.n(meters / 1000)) km" : "\(SVGWriter.n(meters)) m"
            for sign in hasInside ? [1.0, -1.0] : [1.0] {
                let yy = y(sign * meters)
                w.line("<line class=\"grid\" x1=\"\(n(axis.x0))\" y1=\"\(n(yy))\" x2=\"\(n(axis.x1))\" y2=\"\(n(yy))\"/>")
                w.label(sign < 0 ? "−" + text : text, x: axis.x0 - 4, y: yy + 3.5, size: 9.5, anchor: "end", cls: "muted")
            }
            decade += topDecade > 4 ? 2 : 1
        }
        w.line("<line class=\"zero\" x1=\"\(n(axis.x0))\" y1=\"\(n(zeroY))\" x2=\"\(n(axis.x1))\" y2=\"\(n(zeroY))\"/>")
        w.label("0", x: axis.x0 - 4, y: zeroY + 3.5, size: 9.5, anchor: "end", cls: "muted")
        w.label("boundary", x: axis.x1 - 2, y: zeroY - 3, size: 9.5, anchor: "end", cls: "muted halo")
        if hasInside {
            w.label("outside", x: axis.x1 - 2, y: y0 + 10, size: 9.5, anchor: "end", cls: "muted")
            w.label("inside", x: axis.x1 - 2, y: y0 + h - 3, size: 9.5, anchor: "end", cls: "muted")
        }

        // Per pixel column keep first, min, max and last (in time order): the line's envelope
        // survives, including every dip to the boundary, at most 4 points a column.
        var lines: [[ScreenPoint]] = []
        var current: [ScreenPoint] = []
        var column = Int.min
        var bucket: [(index: Int, value: Double)] = []
        func flush() {
            guard !bucket.isEmpty else { return }
            var picks = [bucket[0], bucket[bucket.count - 1]]
            if let lo = bucket.min(by: { $0.value < $1.value }) { picks.append(lo) }
            if let hi = bucket.max(by: { $0.value < $1.value }) { picks.append(hi) }
            var seen = Set<Int>()
            for p in picks.sorted(by: { $0.index < $1.index }) where seen.insert(p.index).inserted {
                current.append(ScreenPoint(x: axis.x(run.track[p.index].time), y: y(p.value)))
            }
            bucket.removeAll(keepingCapacity: true)
        }
        for (i, point) in run.track.enumerated() {
            guard let d = point.nearestBoundaryMeters, d.isFinite else {
                flush()
                if current.count > 0 { lines.append(current) }
                current = []
                column = Int.min
                continue
            }
            let c = Int(axis.x(point.time).rounded(.down))
            if c != column { flush(); column = c }
            bucket.append((i, d))
        }
        flush()
        if current.count > 0 { lines.append(current) }
        for line in lines {
            let points = line.count == 1 ? [line[0], ScreenPoint(x: line[0].x + 0.5, y: line[0].y)] : line
            w.line("<polyline class=\"dist\" points=\"\(points.map { "\(n($0.x)),\(n($0.y))" }.joined(separator: " "))\"/>")
            stats.distanceChartPoints += points.count
        }
    }

    /// Event ticks coloured by kind, labels in two staggered lanes where they fit.
    private func drawEvents(_ events: [GeoEvent], hollow: Bool, top: Double, title: String, into w: inout SVGWriter) {
        let n = SVGWriter.n
        w.label(title, x: labelX, y: top + 14, size: 11)
        if events.isEmpty {
            w.label("none", x: axis.x0 + 4, y: top + 14, size: 10, cls: "muted")
        }
        var laneRight = [-Double.infinity, -Double.infinity]
        var drawn = 0
        var columns = Set<String>()
        for e in events {
            let x = axis.x(e.time)
            let kind = e.kind.rawValue
            // One mark per kind and pixel column: a flood of events stays a bounded row.
            guard columns.insert("\(kind)|\(Int(x.rounded(.down)))").inserted else { continue }
            if hollow {
                w.line("<circle class=\"bl bl-\(kind)\" cx=\"\(n(x))\" cy=\"\(n(top + 6))\" r=\"4\"/>")
            } else {
                w.line("<path class=\"ev-tick ev-\(kind)\" d=\"M\(n(x)) \(n(top + 1))l4.5 7l-4.5 7l-4.5 -7Z\"/>")
            }
            let text = "\(kind)\(e.fenceID.map { " " + SVGWriter.shorten($0, limit: 16) } ?? "")"
            let width = SVGWriter.textWidth(text, size: 9.5)
            let cx = min(max(x, axis.x0 + width / 2), axis.x1 + 20 - width / 2)
            for lane in 0..<2 where cx - width / 2 > laneRight[lane] + 3 && drawn < options.maxEventLabels * 2 {
                w.label(text, x: cx, y: top + 24 + Double(lane) * 10, size: 9.5, anchor: "middle", cls: "muted")
                laneRight[lane] = cx + width / 2
                drawn += 1
                break
            }
        }
    }
}
