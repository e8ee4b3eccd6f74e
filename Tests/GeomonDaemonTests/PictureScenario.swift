import Foundation
import GeomonCore
import GeomonDaemon
import GeomonTestSupport

/// Picture inputs built from a real track (Tests/Fixtures/pictures/garmin-hike.jsonl) with
/// fences placed along it and a synthetic, policy-like receiver schedule:
/// the receiver sleeps for (distance to the nearest boundary − margin) / assumed speed,
/// wakes (acquiring for 20 s, then on), stays on while within 250 m of a boundary.
/// Run events are boundary crossings the device saw; baseline events are every crossing.
enum PictureScenario {
    struct Error: Swift.Error, CustomStringConvertible { var description: String }

    /// Fixes from a geomon JSON-lines track.
    static func readJSONLines(_ relative: String) throws -> [Fix] {
        let data = try Data(contentsOf: TestSupport.fixture(relative))
        var fixes: [Fix] = []
        for (number, line) in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).enumerated() {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let timeText = object["time"] as? String, let time = UTCTime(rfc3339: timeText),
                  let lat = object["lat"] as? Double, let lon = object["lon"] as? Double
            else { throw Error(description: "\(relative):\(number + 1): not a fix") }
            fixes.append(Fix(time: time, coordinate: Coordinate(latitude: lat, longitude: lon),
                             horizontalAccuracyMeters: object["accuracy_m"] as? Double ?? 5))
        }
        return fixes
    }

    /// A point `east`/`north` metres from `c` (flat-earth offset, fine at fence scale).
    static func offset(_ c: Coordinate, east: Double, north: Double) -> Coordinate {
        let m = 111_194.9
        return Coordinate(latitude: c.latitude + north / m,
                          longitude: c.longitude + east / (m * cos(c.latitude * .pi / 180)))
    }

    static func square(_ c: Coordinate, half: Double) -> [Coordinate] {
        [offset(c, east: -half, north: -half), offset(c, east: half, north: -half),
         offset(c, east: half, north: half), offset(c, east: -half, north: half)]
    }

    /// Six fences along the hike: circles, a polygon with a hole, a two-part multipolygon, and
    /// one far away that the map must cull.
    static func fences(along fixes: [Fix]) -> [Fence] {
        func at(_ fraction: Double) -> Coordinate { fixes[Int(Double(fixes.count - 1) * fraction)].coordinate }
        return [
            Fence(id: "trailhead", shape: .circle(center: at(0.02), radiusMeters: 150)),
            Fence(id: "hut", shape: .circle(center: offset(at(0.3), east: 60, north: 40), radiusMeters: 200)),
            Fence(id: "summit-zone", shape: .polygons([PolygonRings(
                shell: square(at(0.5), half: 400), holes: [square(at(0.5), half: 120)])])),
            Fence(id: "pasture", shape: .polygons([
                PolygonRings(shell: square(offset(at(0.68), east: -150, north: 0), half: 130)),
                PolygonRings(shell: square(offset(at(0.68), east: 250, north: 80), half: 90)),
            ])),
            Fence(id: "lake", shape: .circle(center: offset(at(0.85), east: -80, north: 0), radiusMeters: 250)),
            Fence(id: "far-away", shape: .circle(center: Coordinate(latitude: 40, longitude: -3), radiusMeters: 1000)),
        ]
    }

    /// Signed distance to a fence's boundary in metres, negative inside.
    static func signedDistance(_ p: Coordinate, _ fence: Fence) -> Double {
        switch fence.shape {
        case let .circle(center, radius):
            return flatDistance(p, center) - radius
        case let .polygons(polygons):
            var inside = false
            var best = Double.infinity
            for polygon in polygons {
                for ring in [polygon.shell] + polygon.holes {
                    for i in ring.indices {
                        let a = ring[i], b = ring[(i + 1) % ring.count]
                        if (a.latitude > p.latitude) != (b.latitude > p.latitude),
                           p.longitude < (b.longitude - a.longitude) * (p.latitude - a.latitude) / (b.latitude - a.latitude) + a.longitude {
                            inside.toggle()
                        }
                        best = min(best, segmentDistance(p, a, b))
                    }
                }
            }
            return inside ? -best : best
        }
    }

    static func flatDistance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let m = 111_194.9
        let dx = (a.longitude - b.longitude) * m * cos(a.latitude * .pi / 180)
        let dy = (a.latitude - b.latitude) * m
        return (dx * dx + dy * dy).squareRoot()
    }

    static func segmentDistance(_ p: Coordinate, _ a: Coordinate, _ b: Coordinate) -> Double {
        let m = 111_194.9, k = cos(p.latitude * .pi / 180)
        let ax = (a.longitude - p.longitude) * m * k, ay = (a.latitude - p.latitude) * m
        let bx = (b.longitude - p.longitude) * m * k, by = (b.latitude - p.latitude) * m
        let dx = bx - ax, dy = by - ay
        let len2 = dx * dx + dy * dy
        let t = len2 > 0 ? min(max(-(ax * dx + ay * dy) / len2, 0), 1) : 0
        let x = ax + t * dx, y = ay + t * dy
        return (x * x + y * y).squareRoot()
    }

    /// The whole picture input for a track and its fences.
    static func input(title: String, fixes: [Fix], fences: [Fence], assumedSpeed: Double = 2,
                      distances precomputed: [(Double, String)]? = nil) -> RunPicture.Input {
        let nearest: [(Double, String)] = precomputed ?? fixes.map { fix in
            var best = (Double.infinity, "")
            for fence in fences {
                let d = signedDistance(fix.coordinate, fence)
                if abs(d) < abs(best.0) { best = (d, fence.id) }
            }
            return best
        }
        var points: [RunPicture.TrackPoint] = []
        var intervals: [RunPicture.ReceiverInterval] = []
        var state = RunPicture.ReceiverState.on
        var since = fixes[0].time
        var reason = "start"
        var wakeAt = fixes[0].time
        var wakeReason = ""
        func change(to next: RunPicture.ReceiverState, at t: UTCTime, because why: String) {
            intervals.append(.init(start: since, end: t, state: state, reason: reason))
            state = next
            since = t
            reason = why
        }
        for (i, fix) in fixes.enumerated() {
            let (d, id) = nearest[i]
            switch state {
            case .off where fix.time >= wakeAt:
                change(to: .acquiring, at: fix.time, because: wakeReason)
            case .acquiring where fix.time - since >= .seconds(20):
                change(to: .on, at: fix.time, because: abs(d) <= 250 ? "near \(id) (\(Int(abs(d))) m)" : "checking position")
            case .on where abs(d) > 250:
                let sleep = min(max((abs(d) - 100) / assumedSpeed, 60), 1800)
                let minutes = Int(sleep / 60)
                change(to: .off, at: fix.time, because: "sleep \(minutes) min: \(Int(abs(d))) m to \(id)")
                wakeAt = fix.time + .seconds(Int64(sleep))
                wakeReason = "wake: may be near \(id)"
            default:
                break
            }
            points.append(RunPicture.TrackPoint(time: fix.time, coordinate: fix.coordinate, accuracyMeters: fix.horizontalAccuracyMeters,
                                                receiver: state, nearestBoundaryMeters: d.isFinite ? d : nil))
        }
        if let last = fixes.last { intervals.append(.init(start: since, end: last.time, state: state, reason: reason)) }

        // Crossings: the baseline sees every fix, the run only the fixes it was on for.
        var events: [GeoEvent] = [], baseline: [GeoEvent] = []
        for fence in fences {
            var seenInside: Bool?, allInside: Bool?
            for (i, fix) in fixes.enumerated() {
                let inside = signedDistance(fix.coordinate, fence) < 0
                func event(_ prefix: String) -> GeoEvent {
                    GeoEvent(id: "\(prefix)-\(fence.id)-\(i)", kind: inside ? .enter : .exit, fenceID: fence.id, time: fix.time,
                             coordinate: fix.coordinate, accuracyMeters: fix.horizontalAccuracyMeters, rule: "boundary crossed")
                }
                if let was = allInside, was != inside { baseline.append(event("b")) }
                allInside = inside
                guard points[i].receiver == .on else { continue }
                if let was = seenInside, was != inside { events.append(event("r")) }
                seenInside = inside
            }
        }
        events.sort { $0.time < $1.time }
        baseline.sort { $0.time < $1.time }
        return RunPicture.Input(title: title, fences: fences, track: points, receiverIntervals: intervals,
                                events: events, baselineEvents: baseline)
    }

    /// The hike with its fences, schedule, events and always-on baseline.
    static func hike() throws -> RunPicture.Input {
        let fixes = try readJSONLines("pictures/garmin-hike.jsonl")
        return input(title: "geomon replay · profile hike-demo · garmin-hike.jsonl (georust/gpx, real track)",
                     fixes: fixes, fences: fences(along: fixes), assumedSpeed: 0.8)
    }
}
