import Foundation
import GeomonConfig
import GeomonCore
import GeomonEvaluation
@testable import GeomonDaemon
@testable import GeomonPictures
import GeomonSources
import GeomonStore
import GeomonTestSupport
import Testing

/// The run picture, checked with the tools a reader would use: an XML parser (python's
/// minidom, and xmllint when installed) and librsvg's `rsvg-convert`.
@Suite(.serialized)
struct PictureTests {
    /// Writes the SVG into a temp dir, parses it as XML and renders it to PNG.
    @discardableResult
    static func validate(_ svg: String, name: String) throws -> (svg: String, png: String) {
        let dir = try TemporaryDirectory(prefix: "geomon-picture")
        let svgPath = try dir.write("\(name).svg", svg)
        let pngPath = dir.path("\(name).png")
        let xml = try runProcess(URL(fileURLWithPath: "/usr/bin/python3"),
                                 ["-c", "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])", svgPath])
        #expect(xml.exitCode == 0, "not well-formed XML: \(xml.stderr)")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/xmllint") {
            let lint = try runProcess(URL(fileURLWithPath: "/usr/bin/xmllint"), ["--noout", svgPath])
            #expect(lint.exitCode == 0 && lint.stderr.isEmpty, "xmllint: \(lint.stderr)")
        }
        let rsvg = try runProcess(URL(fileURLWithPath: "/usr/bin/rsvg-convert"), ["-o", pngPath, svgPath])
        #expect(rsvg.exitCode == 0 && rsvg.stderr.isEmpty, "rsvg-convert: \(rsvg.stderr)")
        let png = try Data(contentsOf: URL(fileURLWithPath: pngPath))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "rsvg-convert wrote no PNG")
        if ProcessInfo.processInfo.environment["GEOMON_KEEP_PICTURES"] == "1" {
            print("picture kept: \(svgPath) \(pngPath)")
        } else {
            dir.remove()
        }
        return (svgPath, pngPath)
    }

    static func count(_ needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    /// Subpaths (`M` commands) of the path element with the given class.
    static func subpaths(_ cls: String, in svg: String) -> Int {
        guard let line = svg.split(separator: "\n").first(where: { $0.hasPrefix("<path class=\"\(cls)\"") }) else { return 0 }
        return line.filter { $0 == "M" }.count
    }

    /// The header counts the wakes the energy report counts, the start's zero-length one (on
    /// with the first fix in hand, off at once) included.
    @Test func headerCountsTheReportsWakes() throws {
        let profile = try #require(try ProfileLoader.load(path: TestSupport.packageRoot.appendingPathComponent("profiles/geofence-only.yaml").path).profile)
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/genivi_20100403_Z205_Switzerland.nmea").path)
        let run = try ReplayRun.evaluate(profile: profile, fixes: track.fixes, options: .init())
        let svg = ReplayPicture.svg(run, title: "genivi")
        let report = try #require(run.report)
        let header = try #require(svg.firstMatch(of: /· (\d+) wakes? ·/))
        #expect(Int(header.1) == report.wakeups)
        #expect(Self.count("<path class=\"wake\"", in: svg) <= report.wakeups)
    }

    /// A still sensor taking over a sleep switches "off" while off: the off time is split where
    /// the reason changed, and the wakes stay those the energy report counts.
    @Test func anOffWhileOffSplitsTheOffTimeAtItsReason() {
        func t(_ s: Int64) -> UTCTime { UTCTime(millisecondsSince1970: s * 1000) }
        let switches = [ReceiverSwitch(time: t(0), on: true, reason: "start"), ReceiverSwitch(time: t(10), on: false, reason: "sleep"),
                        ReceiverSwitch(time: t(50), on: false, reason: "motion-still"), ReceiverSwitch(time: t(100), on: true, reason: "motion"),
                        ReceiverSwitch(time: t(120), on: false, reason: "sleep")]
        let intervals = ReplayPicture.intervals(switches: switches, gnssFixTimes: [t(2), t(103)], start: t(0), end: t(200))
        #expect(intervals.map { "\($0.state) \($0.start.millisecondsSince1970 / 1000)-\($0.end.millisecondsSince1970 / 1000) \($0.reason)" } == [
            "acquiring 0-2 start", "on 2-10 start", "off 10-50 sleep", "off 50-100 motion-still",
            "acquiring 100-103 motion", "on 103-120 motion", "off 120-200 sleep",
        ])
    }

    @Test func aStillStretchUnderAMotionSensorHasItsOwnColour() throws {
        // The Swiss drive's 176 s stop under the fitness profile (the receiver tracks while the
        // car moves): with the motion sensor replay derives, it is off for the stop's last
        // 116 s because the device stands still.
        let profile = try #require(try ProfileLoader.load(path: TestSupport.packageRoot.appendingPathComponent("profiles/fitness.yaml").path).profile)
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/genivi_20100403_Z205_Switzerland.nmea").path)
        var options = ReplayRun.Options()
        options.motion = true
        let run = try ReplayRun.evaluate(profile: profile, fixes: track.fixes, options: options)
        #expect(run.motion.contains { $0.motion == .still })
        let svg = ReplayPicture.svg(run, title: "genivi, motion")
        #expect(svg.contains("<rect class=\"band-still\""), "no still span drawn")
        #expect(svg.contains(": motion-still"))
        let without = ReplayPicture.svg(try ReplayRun.evaluate(profile: profile, fixes: track.fixes, options: .init()), title: "genivi, no sensor")
        #expect(!without.contains("band-still\" x="))
    }

    @Test func hikePictureIsWellFormedAndRenders() throws {
        let input = try PictureScenario.hike()
        let rendering = RunPicture.render(input)
        try Self.validate(rendering.svg, name: "hike")
        // docs/images/replay-example.svg comes from a real `geomon replay` (docs/pictures.md).
        print("hike picture: \(rendering.stats)")
    }

    @Test func hikePictureShowsFencesEventsGapsAndFurniture() throws {
        let input = try PictureScenario.hike()
        let svg = RunPicture.render(input).svg
        let stats = RunPicture.render(input).stats

        // Self-contained: no scripts, no links, nothing fetched.
        #expect(!svg.contains("<script"))
        #expect(!svg.contains("href"))
        #expect(!svg.contains("@import"))
        #expect(!svg.contains("http://") || Self.count("http://", in: svg) == 1, "only the SVG namespace may be a URL")

        // Five fences in view (three circles; a polygon with a hole; a two-part multipolygon),
        // the sixth is 1,000 km away and culled.
        #expect(Self.count("<ellipse class=\"fence\"", in: svg) == 3)
        #expect(Self.count("<path class=\"fence\"", in: svg) == 2)
        #expect(stats.fencesCulled == 1)
        #expect(!svg.contains("<title>far-away</title>"))
        for id in ["trailhead", "hut", "summit-zone", "pasture", "lake"] {
            #expect(svg.contains("<title>\(id)</title>"), "fence \(id) has no shape")
            #expect(svg.contains(">\(id)</text>"), "fence \(id) has no label")
        }
        let summit = try #require(svg.split(separator: "\n").first { $0.contains("<title>summit-zone</title>") })
        #expect(Self.count("Z", in: String(summit.prefix { $0 != ">" })) == 2, "shell and hole")

        // One filled marker per run event, one hollow per baseline event, each with its label.
        #expect(!input.events.isEmpty)
        for kind in EventKind.allCases {
            #expect(Self.count("class=\"ev ev-\(kind.rawValue)\"", in: svg) == input.events.filter { $0.kind == kind }.count)
        }
        #expect(Self.count("<circle class=\"bl bl-", in: svg) >= (input.baselineEvents ?? []).count)
        for e in input.events {
            let label = MapLayer.describe(e, span: 36_624_000)
            #expect(svg.contains("<title>\(label) — boundary crossed</title>"), "no marker for \(label)")
        }
        #expect(svg.contains(">enter hut 07:31</text>"))
        #expect(stats.eventLabels >= input.events.count - 3)

        // Every stretch with the receiver off between two seen fixes is one dashed straight line.
        var gaps = 0
        let track = input.track
        var i = 0
        while i < track.count {
            if track[i].receiver == .off {
                var j = i
                while j < track.count, track[j].receiver == .off { j += 1 }
                if i > 0, j < track.count { gaps += 1 }
                i = j
            } else {
                i += 1
            }
        }
        #expect(gaps > 5)
        #expect(Self.subpaths("trk trk-off", in: svg) == gaps)
        #expect(svg.contains(".trk-off{stroke:#495057;stroke-width:1.4;stroke-dasharray:6 4}"))
        #expect(Self.subpaths("trk trk-unseen", in: svg) >= gaps)

        // Furniture: scale bar with a round length, north arrow, legend, UTC time axis.
        #expect(svg.contains(">500 m</text>"))
        #expect(svg.contains(">N</text>"))
        #expect(svg.contains(">receiver on</text>"))
        #expect(svg.contains(">05-01 06:00</text>"))
        #expect(svg.contains(">08:00</text>"))
        #expect(svg.contains(">UTC</text>"))
        // Timeline: every powered interval at least 3 px wide is its own span with its reason as
        // a tooltip; shorter ones add to a duty-cycle column (at most two rectangles a column).
        let powered = input.receiverIntervals.filter { $0.state != .off }
        let pixelsPerMs = (1000.0 - 24 - 160) / Double(input.track[input.track.count - 1].time.millisecondsSince1970 - input.track[0].time.millisecondsSince1970)
        let wide = powered.filter { Double($0.end.millisecondsSince1970 - $0.start.millisecondsSince1970) * pixelsPerMs >= 3 }
        #expect(wide.count >= 5 && wide.count < powered.count)
        for i in wide {
            #expect(svg.contains("<title>\(i.state.rawValue) \(i.start.rfc3339) – \(i.end.rfc3339): \(i.reason)</title>"), "no span for \(i)")
        }
        let bandRects = Self.count("<rect class=\"band-on\"", in: svg) + Self.count("<rect class=\"band-acquiring\"", in: svg)
        #expect(bandRects > wide.count)
        #expect(bandRects <= wide.count + 2 * 816)
        #expect(svg.contains(">boundary</text>"))
        #expect(stats.wakeMarkers == Self.count("<path class=\"wake\"", in: svg))
    }

    @Test func sameInputGivesIdenticalBytes() throws {
        let input = try PictureScenario.hike()
        let first = RunPicture.render(input).svg
        #expect(RunPicture.render(input).svg == first)
        // Unsorted input is sorted first: a reversed track draws the same picture.
        var reversed = input
        reversed.track.reverse()
        reversed.events.reverse()
        #expect(RunPicture.render(reversed).svg == first)
        // Numeric attributes have at most one decimal and no exponent, whatever the values.
        let attribute = /\s(?:x|y|cx|cy|r|rx|ry|width|height|x1|y1|x2|y2)="([^"]*)"/
        var checked = 0
        for match in first.matches(of: attribute) {
            #expect(match.1.wholeMatch(of: /-?[0-9]+(\.[0-9])?/) != nil, "bad number \(match.1)")
            checked += 1
        }
        #expect(checked > 100)
    }

    @Test func tenMinuteWalkHasMinuteTicksAndLabelledWakes() throws {
        let all = try PictureScenario.readJSONLines("pictures/garmin-hike.jsonl")
        // 07:24–07:34 UTC: the walk up to the hut, crossing its fence.
        let start = try #require(UTCTime(rfc3339: "2019-05-01T07:24:00Z"))
        let fixes = all.filter { $0.time >= start && $0.time - start <= .seconds(600) }
        let input = PictureScenario.input(title: "ten-minute walk to the hut", fixes: fixes, fences: PictureScenario.fences(along: all),
                                          assumedSpeed: 1, nearMeters: 80)
        let rendering = RunPicture.render(input)
        try Self.validate(rendering.svg, name: "walk")
        let svg = rendering.svg
        print("walk picture: \(rendering.stats)")
        #expect(svg.contains(">05-01 07:25</text>"))
        #expect(svg.contains(">07:26</text>"))
        #expect(svg.contains(">enter hut 07:31:41</text>"))
        #expect(svg.contains(">none</text>") == false)
        #expect(rendering.stats.wakeMarkers >= 1)
        // Few wakes: each reason is printed on the map next to its diamond.
        let wakes = input.receiverIntervals.enumerated().filter { $0.element.state != .off && ($0.offset == 0 || input.receiverIntervals[$0.offset - 1].state == .off) }
        #expect(wakes.count <= RunPicture.Options().maxWakeLabels)
        for wake in wakes where !wake.element.reason.isEmpty {
            #expect(svg.contains(">\(wake.element.reason)</text>"), "wake reason \(wake.element.reason) not on the map")
        }
        #expect(svg.contains("m</text>"))
    }

    @Test func realDriveShowsWakesEventsAndGaps() throws {
        let fixes = try PictureScenario.readJSONLines("pictures/swiss-drive.jsonl")
        #expect(fixes.count == 10_325)
        func at(_ fraction: Double) -> Coordinate { fixes[Int(Double(fixes.count - 1) * fraction)].coordinate }
        let fences = [
            Fence(id: "depot", shape: .circle(center: at(0.0), radiusMeters: 400)),
            Fence(id: "bridge", shape: .circle(center: PictureScenario.offset(at(0.25), east: 200, north: 0), radiusMeters: 600)),
            Fence(id: "town", shape: .polygons([PolygonRings(shell: PictureScenario.square(at(0.5), half: 1500),
                                                             holes: [PictureScenario.square(at(0.5), half: 300)])])),
            Fence(id: "pass", shape: .circle(center: at(0.75), radiusMeters: 800)),
            Fence(id: "destination", shape: .circle(center: at(1.0), radiusMeters: 500)),
        ]
        let input = PictureScenario.input(title: "geomon replay · swiss-drive.jsonl (GENIVI, real 3 h drive)", fixes: fixes,
                                          fences: fences, assumedSpeed: 25, nearMeters: 1000)
        let rendering = RunPicture.render(input)
        print("drive picture: \(rendering.stats)")
        try Self.validate(rendering.svg, name: "drive")
        let svg = rendering.svg
        #expect(rendering.stats.trackPointsDrawn < fixes.count / 2)
        #expect(rendering.stats.fenceShapes == 5)
        #expect(Self.subpaths("trk trk-off", in: svg) > 3)
        #expect(svg.contains(">town</text>"))
        #expect(svg.contains(" km</text>"))
        for e in input.events {
            #expect(svg.contains("<title>\(MapLayer.describe(e, span: 10_624_000)) — boundary crossed</title>"))
        }
        if ProcessInfo.processInfo.environment["GEOMON_UPDATE_PICTURES"] == "1" {
            let images = TestSupport.packageRoot.appendingPathComponent("docs/images")
            let svgURL = images.appendingPathComponent("replay-drive.svg")
            try Data(svg.utf8).write(to: svgURL)
            _ = try runProcess(URL(fileURLWithPath: "/usr/bin/rsvg-convert"),
                               ["-o", images.appendingPathComponent("replay-drive.png").path, svgURL.path])
        }
    }

    @Test func weekAtOneHertzStaysBoundedAndKeepsEventPoints() throws {
        let input = PictureScenario.weekDrive()
        #expect(input.track.count == 7 * 86_400)
        let clock = ContinuousClock()
        let began = clock.now
        let rendering = RunPicture.render(input)
        let elapsed = clock.now - began
        let stats = rendering.stats
        print("week picture: \(stats.trackPointsInput) fixes -> \(stats.trackPointsDrawn) drawn, \(stats.distanceChartPoints) chart points, \(stats.wakeMarkers) wake markers, \(input.events.count) events, \(input.receiverIntervals.count) intervals, \(stats.bytes) bytes, rendered in \(elapsed) (debug build)")
        #expect(stats.bytes < 3_000_000)
        #expect(stats.trackPointsDrawn < 60_000)
        #expect(stats.distanceChartPoints <= 4 * 1000)
        // Every fix at an event (run or baseline) and every state change survives thinning.
        let kept = RunPicture.drawnTrackIndices(input)
        var stats2 = RunPicture.Stats()
        let run = NormalizedRun(input, stats: &stats2)
        for e in input.events + (input.baselineEvents ?? []) {
            let i = try #require(run.trackIndex(nearest: e.time))
            #expect(kept.contains(i), "event fix \(i) at \(e.time) thinned away")
        }
        for i in run.track.indices.dropFirst() where run.track[i].receiver != run.track[i - 1].receiver {
            #expect(kept.contains(i) && kept.contains(i - 1), "state change at \(i) thinned away")
        }
        try Self.validate(rendering.svg, name: "week")
    }

    /// `input` reduced as a streamed replay reduces it: three readings of its track, distances
    /// only in the last.
    static func reduced(_ input: RunPicture.Input) -> RunPicture.Input {
        RunPicture.reducedInput(title: input.title, fences: input.fences, receiverIntervals: input.receiverIntervals,
                                events: input.events, baselineEvents: input.baselineEvents) { withDistances, body in
            for var point in input.track {
                if !withDistances { point.nearestBoundaryMeters = nil }
                body(point)
            }
        }
    }

    @Test func aReducedTrackDrawsTheSamePictureFromFewPoints() throws {
        let week = PictureScenario.weekDrive()
        // A day at 1 Hz with what thinning must get right: gaps in the distance chart, runs of
        // one point, equal timestamps across a state change, invalid coordinates, events
        // between fixes, and no intervals (derived from the points).
        let start = try #require(UTCTime(rfc3339: "2024-05-01T00:00:00Z"))
        let center = Coordinate(latitude: 46.5, longitude: 6.6)
        var track: [RunPicture.TrackPoint] = [], events: [GeoEvent] = []
        for s in 0..<86_400 {
            let angle = Double(s) / 3600 * 2 * .pi
            let c = s % 5000 == 17 ? Coordinate(latitude: .nan, longitude: 0)
                : PictureScenario.offset(center, east: 2000 * cos(angle) + Double(s % 7), north: 1500 * sin(angle * 2))
            let t = start + .seconds(Int64(s - s % 2))
            let state: RunPicture.ReceiverState = s % 1000 < 300 ? .off : (s % 1000 < 310 || s % 777 == 0 ? .acquiring : .on)
            let distance: Double? = s % 3000 < 200 ? nil : (s % 4000 == 5 ? .infinity : 800 * sin(angle * 5))
            track.append(.init(time: t, coordinate: c, accuracyMeters: 5, receiver: state, nearestBoundaryMeters: distance))
            if s % 3333 == 0 {
                events.append(GeoEvent(id: "e\(s)", kind: .enter, fenceID: "f", time: t + .milliseconds(700), coordinate: c,
                                       accuracyMeters: 5, rule: .recorded("test")))
            }
        }
        let day = RunPicture.Input(title: "day", track: track, events: events, baselineEvents: Array(events.prefix(5)))
        let voyage = (0...100).map { k -> RunPicture.TrackPoint in
            let lon = 179.5 + Double(k) * 0.01
            return RunPicture.TrackPoint(time: start + .seconds(Int64(60 * k)), coordinate: Coordinate(latitude: -17, longitude: lon > 180 ? lon - 360 : lon),
                                         accuracyMeters: 5, receiver: k % 10 < 3 ? .off : .on, nearestBoundaryMeters: Double(k - 50))
        }
        let cases = [("week", week), ("day", day), ("voyage", RunPicture.Input(title: "voyage", track: voyage)), ("empty", RunPicture.Input(title: "empty"))]
        for (name, input) in cases {
            let small = Self.reduced(input)
            let whole = RunPicture.render(input), fromReduced = RunPicture.render(small)
            #expect(fromReduced.svg == whole.svg, "\(name): the reduced track draws a different picture")
            #expect(fromReduced.stats == whole.stats, "\(name)")
            // Bounded by what is drawn: the map's and the chart's vertices, a point per event,
            // per interval and per edge of the box.
            let bound = whole.stats.trackPointsDrawn + whole.stats.distanceChartPoints + input.events.count
                + (input.baselineEvents?.count ?? 0) + small.receiverIntervals.count + 6
            #expect(small.track.count <= bound, "\(name): \(small.track.count) of \(input.track.count) points kept")
            print("reduced picture \(name): \(small.track.count) of \(input.track.count) points kept")
        }
        #expect(Self.reduced(week).track.count * 10 < week.track.count)
    }

    @Test func theModesHaveARowOfTheirOwnAndNoMarker() throws {
        let start = try #require(UTCTime(rfc3339: "2024-05-01T08:00:00Z"))
        let center = Coordinate(latitude: 46.5, longitude: 6.6)
        let track = (0..<3600).map { s in
            RunPicture.TrackPoint(time: start + .seconds(Int64(s)), coordinate: PictureScenario.offset(center, east: 5 * Double(s), north: 0),
                                  accuracyMeters: 5, receiver: .on, nearestBoundaryMeters: nil)
        }
        func mode(_ s: Int64, _ from: String, _ to: String) -> GeoEvent {
            var figures = EventFigures()
            figures.mode = to
            figures.modeFrom = from
            figures.modeCause = .externalPower
            var event = GeoEvent(id: "m\(s)", kind: .mode, fenceID: nil, time: start + .seconds(s), coordinate: center,
                                 accuracyMeters: .infinity, rule: .movement(.mode, figures))
            event.figures = figures
            return event
        }
        let events = [mode(0, "default", "driving"), mode(1200, "driving", "parked"), mode(2400, "parked", "driving")]
        let rendering = RunPicture.render(RunPicture.Input(title: "van", track: track, events: events))
        let svg = rendering.svg
        // Three spans, the driving ones in one shade, each named; no event marker for them.
        #expect(Self.count("<rect class=\"mode-a\"", in: svg) == 2 && Self.count("<rect class=\"mode-b\"", in: svg) == 1)
        #expect(svg.contains("<title>mode parked 2024-05-01T08:20:00Z – 2024-05-01T08:40:00Z</title>"))
        #expect(rendering.stats.eventMarkers == 0)
        try Self.validate(svg, name: "modes")
    }

    @Test func flappingReceiverAndEventFloodStayBounded() throws {
        // A day at 1 Hz walking a small loop; the receiver flips every 10 s (the shortest
        // sleep a profile allows) and a location event fires every 10 s: 8,640 of each.
        let start = try #require(UTCTime(rfc3339: "2024-05-01T00:00:00Z"))
        let center = Coordinate(latitude: 46.5, longitude: 6.6)
        var track: [RunPicture.TrackPoint] = [], intervals: [RunPicture.ReceiverInterval] = [], events: [GeoEvent] = []
        for s in 0..<86_400 {
            let angle = Double(s) / 600 * 2 * .pi
            let c = PictureScenario.offset(center, east: 300 * cos(angle), north: 300 * sin(angle))
            let t = start + .seconds(Int64(s))
            let state: RunPicture.ReceiverState = (s / 10) % 2 == 0 ? .on : .off
            track.append(.init(time: t, coordinate: c, accuracyMeters: 5, receiver: state, nearestBoundaryMeters: 300 * sin(angle * 3)))
            if s % 10 == 0 { intervals.append(.init(start: t, end: t + .seconds(10), state: state, reason: "flap")) }
            if s % 10 == 0 {
                events.append(GeoEvent(id: "l\(s)", kind: .location, fenceID: nil, time: t, coordinate: c, accuracyMeters: 5, rule: .recorded("moved")))
            }
        }
        let rendering = RunPicture.render(RunPicture.Input(title: "flapping", track: track, receiverIntervals: intervals, events: events))
        let svg = rendering.svg
        let stats = rendering.stats
        print("flood picture: \(stats.trackPointsDrawn) track vertices, \(stats.eventMarkers) event markers, \(Self.count("<rect class=\"band-on\"", in: svg)) band spans, \(stats.bytes) bytes")
        #expect(stats.bytes < 3_000_000)
        #expect(Self.count("<rect class=\"band-on\"", in: svg) <= 1000)
        #expect(Self.count("class=\"ev-tick ev-location\"", in: svg) <= 1000)
        #expect(stats.eventMarkers < events.count)
        #expect(stats.eventMarkers > 0)
        try Self.validate(svg, name: "flood")
    }

    @Test func tenThousandFencesRenderWithBoundedLabels() throws {
        var input = try PictureScenario.hike()
        input.fences = PictureScenario.manyFences(around: input.track.map(\.coordinate), count: 10_000) + input.fences
        let rendering = RunPicture.render(input)
        let stats = rendering.stats
        print("10k fences: culled \(stats.fencesCulled), shapes \(stats.fenceShapes), dots \(stats.fenceDots), labels \(stats.fenceLabels), \(stats.bytes) bytes")
        #expect(stats.fencesInput == 10_006)
        #expect(stats.fencesCulled > 1000)
        #expect(stats.fenceDots > 100)
        #expect(stats.fenceLabels <= RunPicture.Options().maxFenceLabels)
        #expect(Self.count("class=\"fence-label", in: rendering.svg) == stats.fenceLabels)
        #expect(stats.bytes < 2_000_000)
        // Fences with events keep their labels in the crowd.
        for id in ["hut", "summit-zone", "lake"] {
            #expect(rendering.svg.contains(">\(id)</text>"), "fence \(id) lost its label")
        }
        try Self.validate(rendering.svg, name: "fences")
    }

    @Test func countryBoundariesAreClippedToTheMap() throws {
        let countries = try PictureScenario.readGeoJSONFences("pictures/ne_50m_germany_austria.geojson")
        #expect(countries.map(\.id) == ["Germany", "Austria"])

        // A 3 km hike deep inside Germany: the border polygon is clipped to the view.
        var hike = try PictureScenario.hike()
        hike.fences = countries + hike.fences
        let zoomed = RunPicture.render(hike)
        try Self.validate(zoomed.svg, name: "countries-hike")
        let germany = try #require(zoomed.svg.split(separator: "\n").first { $0.contains("<title>Germany</title>") })
        #expect(germany.filter { $0 == "L" }.count < 20, "Germany not clipped: \(germany.prefix(300))")

        // Munich to Innsbruck at 25 m/s, one fix a minute: crosses the real border.
        let munich = Coordinate(latitude: 48.137, longitude: 11.575), innsbruck = Coordinate(latitude: 47.269, longitude: 11.404)
        let start = try #require(UTCTime(rfc3339: "2024-06-01T08:00:00Z"))
        let fixes = (0...70).map { k -> Fix in
            let f = Double(k) / 70
            return Fix(time: start + .seconds(Int64(k * 60)), coordinate: Coordinate(
                latitude: munich.latitude + (innsbruck.latitude - munich.latitude) * f,
                longitude: munich.longitude + (innsbruck.longitude - munich.longitude) * f), horizontalAccuracyMeters: 8)
        }
        let input = PictureScenario.input(title: "Munich to Innsbruck", fixes: fixes, fences: countries, assumedSpeed: 30, nearMeters: 5000)
        #expect(input.baselineEvents?.map { "\($0.kind.rawValue) \($0.fenceID ?? "")" }.sorted() == ["enter Austria", "exit Germany"])
        let crossing = RunPicture.render(input)
        try Self.validate(crossing.svg, name: "countries-crossing")
        #expect(crossing.stats.fenceShapes == 2)
        #expect(crossing.svg.contains(">Germany</text>") && crossing.svg.contains(">Austria</text>"))
    }

    @Test func clippingKeepsTheVisiblePartOfARing() {
        let box = (x0: 0.0, y0: 0.0, x1: 10.0, y1: 10.0)
        let inside = [ScreenPoint(x: 1, y: 1), ScreenPoint(x: 9, y: 1), ScreenPoint(x: 5, y: 9)]
        #expect(FenceGeometry.clipped(inside, to: box) == inside)
        let around = [ScreenPoint(x: -100, y: -100), ScreenPoint(x: 100, y: -100), ScreenPoint(x: 100, y: 100), ScreenPoint(x: -100, y: 100)]
        let clipped = FenceGeometry.clipped(around, to: box)
        #expect(Set(clipped.map { "\($0.x),\($0.y)" }) == ["0.0,0.0", "10.0,0.0", "10.0,10.0", "0.0,10.0"])
        let half = [ScreenPoint(x: 5, y: -5), ScreenPoint(x: 20, y: -5), ScreenPoint(x: 20, y: 20), ScreenPoint(x: 5, y: 20)]
        #expect(FenceGeometry.clipped(half, to: box).allSatisfy { $0.x >= 5 && $0.x <= 10 && $0.y >= 0 && $0.y <= 10 })
        #expect(FenceGeometry.clipped([ScreenPoint(x: 50, y: 50), ScreenPoint(x: 60, y: 50), ScreenPoint(x: 55, y: 60)], to: box).isEmpty)
    }

    @Test func emptyAndHostileInputsStillGiveValidPictures() throws {
        let empty = RunPicture.render(RunPicture.Input(title: "nothing"))
        try Self.validate(empty.svg, name: "empty")
        #expect(empty.svg.contains("no track, no events"))
        #expect(empty.svg.contains(">nothing to draw: no track, events or fences</text>"))

        // A database view: fences and events only, no track, odd characters everywhere.
        let c = Coordinate(latitude: 47.5, longitude: 11)
        let fence = Fence(id: "<home & \"garden\">\u{1}", shape: .circle(center: c, radiusMeters: 80))
        let event = GeoEvent(id: "e1", kind: .enter, fenceID: fence.id, time: UTCTime(millisecondsSince1970: 1_700_000_000_000),
                             coordinate: c, accuracyMeters: 5, rule: .recorded("a < b & c"))
        let bad = RunPicture.TrackPoint(time: UTCTime(millisecondsSince1970: 1_700_000_000_000),
                                        coordinate: Coordinate(latitude: .nan, longitude: 500), accuracyMeters: .infinity, receiver: .on,
                                        nearestBoundaryMeters: .nan)
        let seen = RunPicture.TrackPoint(time: event.time, coordinate: c, accuracyMeters: 5, receiver: .on)
        let odd = RunPicture.render(RunPicture.Input(title: "odd ]]> & <stuff>", fences: [fence], track: [bad, seen], events: [event]))
        try Self.validate(odd.svg, name: "odd")
        #expect(odd.stats.trackPointsInvalid == 1)
        #expect(odd.svg.contains("&lt;home &amp; &quot;garden&quot;&gt;?"))
        // Stored fixes without a power log: no invented wake, no distance chart.
        #expect(odd.stats.wakeMarkers == 0)
        #expect(odd.svg.contains(">no distance data</text>"))
    }

    @Test func aVoyageAcrossTheAntimeridianIsDrawnInOnePiece() throws {
        let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
        // 179.5°E → 179.5°W in 100 steps, past a circle on 180° and a box split the RFC 7946 way.
        let track = (0...100).map { k -> RunPicture.TrackPoint in
            let lon = 179.5 + Double(k) * 0.01
            return RunPicture.TrackPoint(time: t0 + .seconds(Int64(60 * k)), coordinate: Coordinate(latitude: -17, longitude: lon > 180 ? lon - 360 : lon),
                                         accuracyMeters: 5, receiver: .on)
        }
        let fences = [
            Fence(id: "dateline", shape: .circle(center: Coordinate(latitude: -17, longitude: 180), radiusMeters: 5000)),
            Fence(id: "split", shape: .polygons([
                PolygonRings(shell: [Coordinate(latitude: -17.2, longitude: 179.8), Coordinate(latitude: -17.2, longitude: 180), Coordinate(latitude: -16.9, longitude: 180), Coordinate(latitude: -16.9, longitude: 179.8)]),
                PolygonRings(shell: [Coordinate(latitude: -17.2, longitude: -180), Coordinate(latitude: -17.2, longitude: -179.8), Coordinate(latitude: -16.9, longitude: -179.8), Coordinate(latitude: -16.9, longitude: -180)]),
            ])),
        ]
        let picture = RunPicture.render(RunPicture.Input(title: "voyage", fences: fences, track: track))
        _ = try Self.validate(picture.svg, name: "antimeridian")
        // The track is one path across the map: consecutive points a few pixels apart, never
        // a jump across the whole width.
        let line = try #require(picture.svg.split(separator: "\n").first { $0.hasPrefix("<path class=\"trk trk-on\"") })
        let numbers = line.split(whereSeparator: { !"0123456789.-".contains($0) }).compactMap { Double($0) }
        let xs = stride(from: 0, to: numbers.count - 1, by: 2).map { numbers[$0] }
        #expect(xs.count > 10)
        #expect(zip(xs, xs.dropFirst()).allSatisfy { abs($1 - $0) < 60 }, "\(xs)")
        #expect(Self.count("<title>dateline</title>", in: picture.svg) == 1 && Self.count("<title>split</title>", in: picture.svg) == 1)
    }

    @Test func aDatabaseWithoutTheReceiversHistorySaysItIsUnknown() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("old.db"))
        var batch = CommitBatch(profileName: "old", committedAt: UTCTime(millisecondsSince1970: 1_700_000_100_000))
        batch.fixes = (0..<100).map { k in
            Fix(time: UTCTime(millisecondsSince1970: 1_700_000_000_000 + Int64(k) * 60_000),
                coordinate: Coordinate(latitude: 46.3 + Double(k) * 0.001, longitude: 6.9), horizontalAccuracyMeters: 5)
        }
        try store.commit(batch)
        let svg = try ReplayPicture.svg(store: store, profile: nil, title: "old")
        _ = try Self.validate(svg, name: "unknown-receiver")
        #expect(svg.contains("receiver state not recorded"))
        #expect(!svg.contains("% of the time"))
        #expect(!svg.contains("trk trk-on"))
        #expect(Self.subpaths("trk trk-unknown", in: svg) == 1)
        #expect(svg.contains("fixes (receiver not recorded)"))

        // With the switches stored, the same fixes are drawn as the receiver ran.
        var switches = CommitBatch(profileName: "old", committedAt: UTCTime(millisecondsSince1970: 1_700_006_000_000))
        switches.receiverSwitches = [
            ReceiverSwitch(time: UTCTime(millisecondsSince1970: 1_700_000_000_000), on: true, reason: "start"),
            ReceiverSwitch(time: UTCTime(millisecondsSince1970: 1_700_003_000_000), on: false, reason: "sleep"),
        ]
        try store.commit(switches)
        let known = try ReplayPicture.svg(store: store, profile: nil, title: "known")
        #expect(!known.contains("receiver state not recorded"))
        #expect(known.contains("receiver on 50.5% of the time"))
    }

    @Test func fixesTakeTheStateOfTheirInterval() throws {
        let t0 = try #require(UTCTime(rfc3339: "2024-05-01T10:00:00Z"))
        let fixes = (0..<8).map { Fix(time: t0 + .seconds(Int64($0 * 10)), coordinate: Coordinate(latitude: 47, longitude: 8), horizontalAccuracyMeters: 5) }
        let intervals: [RunPicture.ReceiverInterval] = [
            .init(start: t0 + .seconds(20), end: t0 + .seconds(40), state: .off, reason: "sleep"),
            .init(start: t0 + .seconds(40), end: t0 + .seconds(50), state: .acquiring, reason: "wake"),
            .init(start: t0, end: t0 + .seconds(20), state: .on, reason: "start"),
            .init(start: t0 + .seconds(50), end: t0 + .seconds(60), state: .on, reason: "fix"),
        ]
        let points = RunPicture.trackPoints(fixes: fixes, intervals: intervals, nearestBoundaryMeters: { $0.latitude - 47 + 12.5 })
        #expect(points.map(\.receiver) == [.on, .on, .off, .off, .acquiring, .on, .on, .on])
        #expect(points.allSatisfy { $0.nearestBoundaryMeters == 12.5 })
        let derived = RunPicture.receiverIntervals(from: points)
        #expect(derived.map(\.state) == [.on, .off, .acquiring, .on])
        #expect(derived.map { $0.end - $0.start } == [.seconds(20), .seconds(20), .seconds(10), .seconds(20)])
    }

    @Test(arguments: [(0.0, "0"), (-0.04, "0"), (1.25, "1.3"), (2.0, "2"), (-3.45, "-3.5"), (1234.56, "1234.6"), (Double.nan, "0"), (1e300, "1000000000000")])
    func numbersHaveOneFixedDecimal(value: Double, text: String) {
        #expect(SVGWriter.n(value) == text)
    }

    @Test func scaleBarIsARoundLength() {
        #expect(ScaleBar.length(metersPerPixel: 2.5, maxPixels: 196).text == "200 m")
        #expect(ScaleBar.length(metersPerPixel: 4, maxPixels: 196).text == "500 m")
        #expect(ScaleBar.length(metersPerPixel: 50, maxPixels: 196).text == "5 km")
        #expect(ScaleBar.length(metersPerPixel: 0.01, maxPixels: 196).text == "1 m")
    }

    @Test func timeTicksAreRoundUTC() {
        func axis(_ seconds: Int64) -> TimeAxis {
            let start = UTCTime(rfc3339: "2024-05-01T10:03:20Z") ?? UTCTime(millisecondsSince1970: 0)
            return TimeAxis(start: start, end: start + .seconds(seconds), x0: 0, x1: 1000)
        }
        let walk = axis(600)
        #expect(walk.stepMilliseconds == 60_000)
        #expect(walk.ticks.first?.rfc3339 == "2024-05-01T10:04:00Z")
        #expect(walk.label(walk.ticks[0], previous: nil) == "05-01 10:04")
        #expect(walk.label(walk.ticks[1], previous: walk.ticks[0]) == "10:05")
        let week = axis(7 * 86_400)
        #expect(week.stepMilliseconds == 86_400_000)
        #expect(week.ticks.first?.rfc3339 == "2024-05-02T00:00:00Z")
        #expect(week.label(week.ticks[0], previous: nil) == "2024-05-02")
        #expect(axis(45).stepMilliseconds == 5_000)
    }
}
