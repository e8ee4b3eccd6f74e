import Foundation
import GeomonCore
import GeomonDaemon
import GeomonPictures
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
        switch fence.shape ?? .polygons([]) {
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
        case let .corridor(lines, width):
            var best = Double.infinity
            for line in lines {
                for i in line.indices.dropFirst() { best = min(best, segmentDistance(p, line[i - 1], line[i])) }
            }
            return best - width / 2
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
                      nearMeters: Double = 250, distances precomputed: [(Double, String)]? = nil) -> RunPicture.Input {
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
                change(to: .on, at: fix.time, because: abs(d) <= nearMeters ? "near \(id) (\(Int(abs(d))) m)" : "checking position")
            case .on where abs(d) > nearMeters:
                let sleep = min(max((abs(d) - nearMeters / 2) / assumedSpeed, 60), 1800)
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
                             coordinate: fix.coordinate, accuracyMeters: fix.horizontalAccuracyMeters, rule: .recorded("boundary crossed"))
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

extension PictureScenario {
    /// A deterministic pseudo-random generator (SplitMix64), so synthetic data is the same
    /// on every run.
    struct SplitMix {
        var state: UInt64
        mutating func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
    }

    /// A synthetic week at 1 Hz: a car driving 07:00–19:00 around a 60 km region (steering back
    /// toward the centre), parked with GNSS jitter at night, with ten circular fences placed on
    /// its path. Same receiver schedule and events as the hike, tuned for driving speeds.
    static func weekDrive() -> RunPicture.Input {
        var random = SplitMix(state: 42)
        let origin = Coordinate(latitude: 47.37, longitude: 8.54)
        let start = UTCTime(rfc3339: "2024-05-06T00:00:00Z") ?? UTCTime(millisecondsSince1970: 0)
        var east = 0.0, north = 0.0, heading = 0.3
        var fixes: [Fix] = []
        fixes.reserveCapacity(7 * 86_400)
        for s in 0..<(7 * 86_400) {
            let hour = (s % 86_400) / 3600
            if (7..<19).contains(hour) {
                heading += (random.next() - 0.5) * 0.05
                let distance = (east * east + north * north).squareRoot()
                if distance > 30_000 {
                    // Turn gently toward the centre.
                    let home = atan2(-north, -east)
                    heading += 0.02 * sin(home - heading)
                }
                let speed = 8 + 14 * random.next()
                east += cos(heading) * speed
                north += sin(heading) * speed
            }
            let jitter = (random.next() - 0.5) * 4
            fixes.append(Fix(time: start + .seconds(Int64(s)), coordinate: offset(origin, east: east + jitter, north: north + jitter),
                             horizontalAccuracyMeters: 5))
        }
        var fences: [Fence] = []
        for k in 0..<10 {
            let at = fixes[(k * 60_013 + 30_000) % fixes.count].coordinate
            fences.append(Fence(id: "place-\(k)", shape: .circle(center: offset(at, east: 150, north: -100), radiusMeters: 400)))
        }
        return input(title: "synthetic week at 1 Hz", fixes: fixes, fences: fences, assumedSpeed: 30)
    }

    /// `count` small fences (circles and squares, 3–200 m, most under 30 m) scattered over a box three times
    /// the size of the track's, so many are out of view and most are tiny on screen.
    static func manyFences(around coordinates: [Coordinate], count: Int) -> [Fence] {
        var random = SplitMix(state: 7)
        let lats = coordinates.map(\.latitude), lons = coordinates.map(\.longitude)
        let minLat = lats.min() ?? 0, maxLat = lats.max() ?? 0, minLon = lons.min() ?? 0, maxLon = lons.max() ?? 0
        let dLat = maxLat - minLat, dLon = maxLon - minLon
        var fences: [Fence] = []
        for i in 0..<count {
            let c = Coordinate(latitude: minLat - dLat + 3 * dLat * random.next(), longitude: minLon - dLon + 3 * dLon * random.next())
            let size = 3 + 200 * random.next() * random.next() * random.next()
            let id = "f" + String(repeating: "0", count: 5 - String(i).count) + String(i)
            if i % 3 == 0 {
                fences.append(Fence(id: id, shape: .polygons([PolygonRings(shell: square(c, half: size))])))
            } else {
                fences.append(Fence(id: id, shape: .circle(center: c, radiusMeters: size)))
            }
        }
        return fences
    }
}

extension PictureScenario {
    /// Fences from a GeoJSON FeatureCollection of Polygons/MultiPolygons, id from `name`.
    static func readGeoJSONFences(_ relative: String) throws -> [Fence] {
        let data = try Data(contentsOf: TestSupport.fixture(relative))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let features = root["features"] as? [[String: Any]]
        else { throw Error(description: "\(relative): not a FeatureCollection") }
        func ring(_ any: Any) throws -> [Coordinate] {
            guard let points = any as? [[Double]] else { throw Error(description: "\(relative): bad ring") }
            return points.compactMap { $0.count >= 2 ? Coordinate(latitude: $0[1], longitude: $0[0]) : nil }
        }
        func polygon(_ any: Any) throws -> PolygonRings {
            guard let rings = any as? [Any], let shell = rings.first else { throw Error(description: "\(relative): bad polygon") }
            return PolygonRings(shell: try ring(shell), holes: try rings.dropFirst().map(ring))
        }
        return try features.map { feature in
            guard let geometry = feature["geometry"] as? [String: Any], let type = geometry["type"] as? String,
                  let coordinates = geometry["coordinates"] as? [Any],
                  let name = (feature["properties"] as? [String: Any])?["name"] as? String
            else { throw Error(description: "\(relative): bad feature") }
            let polygons = type == "MultiPolygon" ? try coordinates.map(polygon) : [try polygon(coordinates)]
            return Fence(id: name, shape: .polygons(polygons))
        }
    }
}
