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
        axis = TimeAxis(start: run.start, end: run.end, x0: Self.axisX0, x1: width - Self.axisRightMargin)
    }

    /// Where the time axis begins, and how far before the picture's right edge it ends.
    static let axisX0 = 160.0
    static let axisRightMargin = 24.0

    static let modeRowHeight = 18.0

    /// The mode row's height with its gap (none without modes).
    private var modeRow: Double { run.modeSpans.isEmpty ? 0 : Self.modeRowHeight + Self.gap }

    var height: Double {
        Self.bandHeight + Self.gap + modeRow + Self.chartHeight + Self.gap + Self.eventRowHeight
            + (run.baseline == nil ? 0 : Self.eventRowHeight) + Self.axisHeight
    }

    private var bandTop: Double { top }
    private var modeTop: Double { top + Self.bandHeight + Self.gap }
    private var chartTop: Double { top + Self.bandHeight + Self.gap + modeRow }
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
        drawModes(into: &w)
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

    /// How the receiver row is drawn: intervals at least 3 px wide as their own rectangles
    /// (with times and reason as a tooltip); shorter ones summed per pixel column into a duty
    /// cycle (share of the column's time on and acquiring). At most 2 rectangles a column,
    /// however often the receiver switched.
    struct Band {
        var wide: [(interval: RunPicture.ReceiverInterval, x0: Double, x1: Double)] = []
        /// Per pixel column (from `axis.x0`): milliseconds on and acquiring in short intervals.
        var onMilliseconds: [Int64] = []
        var acquiringMilliseconds: [Int64] = []
    }

    var band: Band {
        var band = Band()
        let columns = max(Int((axis.x1 - axis.x0).rounded(.up)), 1)
        band.onMilliseconds = Array(repeating: 0, count: columns)
        band.acquiringMilliseconds = Array(repeating: 0, count: columns)
        let msPerPixel = Double(axis.spanMilliseconds) / (axis.x1 - axis.x0)
        for interval in run.intervals where interval.state.isPowered {
            let x0 = axis.x(interval.start), x1 = axis.x(interval.end)
            if x1 - x0 >= 3 {
                band.wide.append((interval, x0, x1))
                continue
            }
            // Spread the interval's time over the columns it touches.
            var t = Double(interval.start.millisecondsSince1970 - axis.start.millisecondsSince1970)
            let tEnd = Double(interval.end.millisecondsSince1970 - axis.start.millisecondsSince1970)
            while t < tEnd {
                let c = min(max(Int(t / msPerPixel), 0), columns - 1)
                let next = min(tEnd, Double(c + 1) * msPerPixel)
                let ms = Int64(max(next - t, 0).rounded())
                if interval.state == .on { band.onMilliseconds[c] += ms } else { band.acquiringMilliseconds[c] += ms }
                if next <= t { break }
                t = next
            }
            if interval.end == interval.start {
                // A zero-length wake still shows as a sliver.
                let c = min(max(Int(x0 - axis.x0), 0), columns - 1)
                if interval.state == .on { band.onMilliseconds[c] += 1 } else { band.acquiringMilliseconds[c] += 1 }
            }
        }
        return band
    }

    /// Receiver state as coloured spans, each with its reason as a tooltip and, when it fits,
    /// as text.
    /// The mode in effect over time (`modes:`): alternating shades, each span named where
    /// the name fits.
    private func drawModes(into w: inout SVGWriter) {
        guard !run.modeSpans.isEmpty else { return }
        let n = SVGWriter.n
        w.label("mode", x: labelX, y: modeTop + 13, size: 11)
        var names: [String] = []
        for span in run.modeSpans {
            if !names.contains(span.name) { names.append(span.name) }
            let x0 = axis.x(span.start), x1 = axis.x(span.end)
            guard x1 > x0 else { continue }
            let shade = names.firstIndex(of: span.name)! % 2 == 0 ? "mode-a" : "mode-b"
            let tip = "mode \(span.name) \(span.start.rfc3339) – \(span.end.rfc3339)"
            w.line("<rect class=\"\(shade)\" x=\"\(n(x0))\" y=\"\(n(modeTop))\" width=\"\(n(max(x1 - x0, 1)))\" height=\"\(n(Self.modeRowHeight))\"><title>\(SVGWriter.escape(tip))</title></rect>")
            let text = SVGWriter.shorten(span.name, limit: 30)
            if SVGWriter.textWidth(text, size: 9.5) + 6 < x1 - x0 {
                w.label(text, x: x0 + 3, y: modeTop + 13, size: 9.5, cls: "band-text")
            }
        }
    }

    private func drawBand(into w: inout SVGWriter) {
        let n = SVGWriter.n
        w.label("receiver", x: labelX, y: bandTop + 15, size: 11)
        w.line("<rect class=\"band-off\" x=\"\(n(axis.x0))\" y=\"\(n(bandTop))\" width=\"\(n(axis.x1 - axis.x0))\" height=\"\(n(Self.bandHeight))\"/>")
        // Off because a motion sensor says the device stands still: its own colour.
        for i in run.intervals where i.state == .off && i.reason.hasPrefix(PowerReason.Kind.motionStill.rawValue) {
            let x0 = axis.x(i.start), x1 = axis.x(i.end)
            guard x1 > x0 else { continue }
            let tip = "off \(i.start.rfc3339) – \(i.end.rfc3339): \(i.reason)"
            w.line("<rect class=\"band-still\" x=\"\(n(x0))\" y=\"\(n(bandTop))\" width=\"\(n(max(x1 - x0, 1)))\" height=\"\(n(Self.bandHeight))\"><title>\(SVGWriter.escape(tip))</title></rect>")
        }
        let band = self.band
        for item in band.wide {
            let i = item.interval
            let tip = "\(i.state.rawValue) \(i.start.rfc3339) – \(i.end.rfc3339)\(i.reason.isEmpty ? "" : ": " + i.reason)"
            w.line("<rect class=\"band-\(i.state.rawValue)\" x=\"\(n(item.x0))\" y=\"\(n(bandTop))\" width=\"\(n(item.x1 - item.x0))\" height=\"\(n(Self.bandHeight))\"><title>\(SVGWriter.escape(tip))</title></rect>")
        }
        // Short intervals: a duty-cycle column, on from the bottom, acquiring above it.
        let msPerPixel = Double(axis.spanMilliseconds) / (axis.x1 - axis.x0)
        for c in band.onMilliseconds.indices {
            let on = band.onMilliseconds[c], acquiring = band.acquiringMilliseconds[c]
            guard on + acquiring > 0 else { continue }
            // At least a fifth of the row, so a lone short wake stays visible.
            let total = max(min(Double(on + acquiring) / msPerPixel, 1), 0.2)
            let onHeight = Self.bandHeight * total * Double(on) / Double(on + acquiring)
            let acquiringHeight = Self.bandHeight * total - onHeight
            let x = axis.x0 + Double(c)
            if onHeight > 0 {
                w.line("<rect class=\"band-on\" x=\"\(n(x))\" y=\"\(n(bandTop + Self.bandHeight - onHeight))\" width=\"1\" height=\"\(n(onHeight))\"/>")
            }
            if acquiringHeight > 0 {
                w.line("<rect class=\"band-acquiring\" x=\"\(n(x))\" y=\"\(n(bandTop + Self.bandHeight - onHeight - acquiringHeight))\" width=\"1\" height=\"\(n(acquiringHeight))\"/>")
            }
        }
        if run.receiverUnknown {
            w.label("receiver state not recorded in this database", x: axis.x0 + 6, y: bandTop + 15, size: 9.5, cls: "muted")
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
        let band = self.band
        for item in band.wide {
            w.line("<rect class=\"on-shade\" x=\"\(n(item.x0))\" y=\"\(n(y0))\" width=\"\(n(item.x1 - item.x0))\" height=\"\(n(h))\"/>")
        }
        let msPerPixel = Double(axis.spanMilliseconds) / (axis.x1 - axis.x0)
        for c in band.onMilliseconds.indices {
            let share = min(Double(band.onMilliseconds[c] + band.acquiringMilliseconds[c]) / msPerPixel, 1)
            guard share >= 0.05 else { continue }
            w.line("<rect class=\"on-shade\" x=\"\(n(axis.x0 + Double(c)))\" y=\"\(n(y0))\" width=\"1\" height=\"\(n(h))\" opacity=\"\(SVGWriter.n(share))\"/>")
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
