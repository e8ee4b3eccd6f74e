/// Draws one run of the monitor as a single self-contained SVG: a map (fences, the track
/// coloured by receiver state, events, where the receiver woke and why) above a timeline
/// sharing one time axis (receiver state, distance to the nearest boundary, events).
///
/// Pure apart from building a string: no clock, no files, no randomness. The same input gives
/// byte-identical output. The SVG has no scripts, no external references and no fetched fonts.
public enum RunPicture {
    /// Layout and legibility knobs; the defaults suit a screen or a README.
    public struct Options: Sendable {
        public var widthPixels: Double = 1000
        public var minMapHeightPixels: Double = 360
        public var maxMapHeightPixels: Double = 720
        /// Track points closer than this to the previously kept one (on screen) are dropped.
        public var minPointSpacingPixels: Double = 1.5
        /// Above this many fences in view, small fences become dots and only fences near the
        /// track or with events are labelled.
        public var detailedFenceLimit: Int = 50
        public var maxFenceLabels: Int = 40
        public var maxEventLabels: Int = 60
        /// Wake markers on the map get their reason as a label up to this many wakes.
        public var maxWakeLabels: Int = 12
        public init() {}
    }

    /// What was drawn, for tests and for the CLI to report.
    public struct Stats: Hashable, Sendable {
        public var trackPointsInput = 0
        /// Track points skipped because their coordinate was invalid.
        public var trackPointsInvalid = 0
        /// Vertices written in track polylines (seen, unseen and dashed gaps).
        public var trackPointsDrawn = 0
        public var fencesInput = 0
        /// Fences outside the map, not drawn.
        public var fencesCulled = 0
        public var fenceShapes = 0
        public var fenceDots = 0
        public var fenceLabels = 0
        public var eventMarkers = 0
        public var eventLabels = 0
        public var baselineMarkers = 0
        public var wakeMarkers = 0
        public var distanceChartPoints = 0
        public var bytes = 0
    }

    /// The SVG text and what went into it.
    public struct Rendering: Sendable {
        public var svg: String
        public var stats: Stats
    }

    /// Renders `input` into one SVG document.
    public static func render(_ input: Input, options: Options = Options()) -> Rendering {
        let options = clamped(options)
        var stats = Stats()
        let run = NormalizedRun(input, stats: &stats)
        let width = options.widthPixels
        let margin = Self.margin
        let projection = mapProjection(run, options: options)
        let timelineTop = projection.rect.y + projection.rect.height + 18
        let timeline = TimelineLayer(run: run, top: timelineTop, width: width, options: options)
        let height = timelineTop + timeline.height + 8

        var w = SVGWriter()
        w.line("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        w.line("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(SVGWriter.n(width))\" height=\"\(SVGWriter.n(height))\" viewBox=\"0 0 \(SVGWriter.n(width)) \(SVGWriter.n(height))\">")
        w.line("<title>\(SVGWriter.escape(input.title))</title>")
        w.line("<style>\(RunPictureStyle.css)</style>")
        w.line("<rect class=\"bg\" x=\"0\" y=\"0\" width=\"\(SVGWriter.n(width))\" height=\"\(SVGWriter.n(height))\"/>")
        w.label(SVGWriter.shorten(input.title, limit: 110), x: margin, y: 24, size: 17, cls: "title")
        w.label(run.summary, x: margin, y: 44, size: 12, cls: "subtitle")

        var map = MapLayer(run: run, projection: projection, options: options)
        map.draw(into: &w, stats: &stats)
        timeline.draw(into: &w, stats: &stats)

        w.line("</svg>")
        stats.bytes = w.text.utf8.count
        return Rendering(svg: w.text, stats: stats)
    }

    static let margin = 12.0
    static let headerHeight = 58.0

    /// The map's projection: fits the track and events (or, without them, the fences).
    static func mapProjection(_ run: NormalizedRun, options: Options) -> MapProjection {
        let mapWidth = options.widthPixels - 2 * margin
        let box = run.dataBox ?? GeoBox(minLatitude: -1, maxLatitude: 1, minLongitude: -1, maxLongitude: 1)
        let mapHeight = MapProjection.preferredHeight(
            for: box, width: mapWidth, minHeight: options.minMapHeightPixels, maxHeight: options.maxMapHeightPixels)
        return MapProjection(fitting: box, into: (margin, headerHeight, mapWidth, mapHeight))
    }

    /// Indices (into the time-sorted valid track) of the points the map draws; for tests.
    static func drawnTrackIndices(_ input: Input, options: Options = Options()) -> Set<Int> {
        var stats = Stats()
        let run = NormalizedRun(input, stats: &stats)
        let map = MapLayer(run: run, projection: mapProjection(run, options: options), options: options)
        return Set(map.thinnedTrack().flatMap(\.indices))
    }
}
