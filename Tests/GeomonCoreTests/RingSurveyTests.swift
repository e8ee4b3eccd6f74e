@testable import GeomonCore
import Foundation
import Testing

/// `PolygonValidity.survey` reads a ring in two passes where the checks before it took six:
/// its winding and repeats must be what a reader reports, and its one-pass star-shape test
/// must decide every ring as testing each edge against the margin does.
struct RingSurveyTests {
    static func ring(_ points: [(Double, Double)]) -> [Coordinate] {
        points.map { Coordinate(latitude: $0.1, longitude: $0.0) }
    }

    @Test func theWindingAndRepeatsOfARing() {
        let square = Self.ring([(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)])
        let counterclockwise = PolygonValidity.survey(ofRing: square)
        #expect(counterclockwise.twiceSignedArea == 2)
        #expect(!counterclockwise.repeatsPosition)
        #expect(counterclockwise.problems == [])
        let clockwise = PolygonValidity.survey(ofRing: square.reversed())
        #expect(clockwise.twiceSignedArea == -2)
        let repeated = PolygonValidity.survey(ofRing: Self.ring([(0, 0), (1, 0), (1, 0), (1, 1), (0, 1), (0, 0)]))
        #expect(repeated.repeatsPosition)
        #expect(repeated.problems == [])
        // Across the antimeridian, counterclockwise as drawn on the map.
        let across = PolygonValidity.survey(ofRing: Self.ring([(179.5, 0), (-179.5, 0), (-179.5, 1), (179.5, 1), (179.5, 0)]))
        #expect(across.twiceSignedArea > 0)
        #expect(across.problems == [])
    }

    @Test func aRingWithAnInvalidPositionIsOnlyThat() {
        let survey = PolygonValidity.survey(ofRing: Self.ring([(0, 0), (1, 0), (.infinity, 1), (0, 1), (0, 0)]))
        #expect(survey.problems == [.invalidCoordinate(index: 2)])
    }

    /// The star-shape test as it was written before: each cross product against the margin,
    /// returning at the first that is too close to call.
    static func edgeByEdge(_ points: [Coordinate]) -> Bool {
        let n = points.count
        guard n >= 3 else { return false }
        var cx = 0.0, cy = 0.0
        for p in points { cx += p.longitude; cy += p.latitude }
        cx /= Double(n); cy /= Double(n)
        var scale2 = 0.0
        for p in points {
            let dx = p.longitude - cx, dy = p.latitude - cy
            scale2 = max(scale2, dx * dx + dy * dy)
        }
        guard scale2 > 0 else { return false }
        let margin = scale2 * 1e-9
        var positive = 0, negative = 0, turns = 0
        var ax = points[n - 1].longitude - cx, ay = points[n - 1].latitude - cy
        for p in points {
            let bx = p.longitude - cx, by = p.latitude - cy
            let cross = ax * by - ay * bx
            if cross > margin { positive += 1 } else if cross < -margin { negative += 1 } else { return false }
            if (ay <= 0) != (by <= 0), ax + (0 - ay) * (bx - ax) / (by - ay) > 0 { turns += 1 }
            ax = bx; ay = by
        }
        return (positive == n || negative == n) && turns == 1
    }

    /// Rings from a fixed seed: blobs around a centre in either direction, some with a vertex
    /// nearly in line with the centre and its neighbour (within a few margins of the line, on
    /// either side), some with two vertices swapped, some doubled back, some degenerate.
    @Test func theOnePassStarShapeDecidesAsEdgeByEdge() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        var starShaped = 0, notStarShaped = 0, nearTheMargin = 0
        for trial in 0..<3000 {
            let n = 3 + Int(next() * 40)
            var points: [Coordinate] = []
            for k in 0..<n {
                let angle = (Double(k) + 0.8 * next()) * 2 * .pi / Double(n)
                let radius = 0.001 * (0.2 + next())
                points.append(Coordinate(latitude: 46 + radius * sin(angle), longitude: 7 + radius * cos(angle)))
            }
            switch trial % 6 {
            case 1: points.reverse()
            case 2:
                // Symmetric about the centre (so the mean stays there), with a vertex and its
                // mirror nearly in line with the centre and the vertex before: the cross product
                // within a few margins of zero, on either side.
                let half = max(2, n / 2)
                let c = Coordinate(latitude: 46, longitude: 7)
                points = []
                for k in 0..<half {
                    let angle = (Double(k) + 0.8 * next()) * .pi / Double(half)
                    let radius = 0.001 * (0.2 + next())
                    points.append(Coordinate(latitude: c.latitude + radius * sin(angle), longitude: c.longitude + radius * cos(angle)))
                }
                points += points.map { Coordinate(latitude: 2 * c.latitude - $0.latitude, longitude: 2 * c.longitude - $0.longitude) }
                let k = 1 + Int(next() * Double(half - 1))
                let ax = points[k - 1].longitude - c.longitude, ay = points[k - 1].latitude - c.latitude
                let t = 0.3 + 0.6 * next()
                points[k] = Coordinate(latitude: c.latitude + t * ay, longitude: c.longitude + t * ax)
                points[k + half] = Coordinate(latitude: c.latitude - t * ay, longitude: c.longitude - t * ax)
                let scale2 = points.map { let dx = $0.longitude - c.longitude, dy = $0.latitude - c.latitude; return dx * dx + dy * dy }.max() ?? 0
                // cross = t·ε·|a|² for an offset ε·(−ay, ax): aim at (−3, 3) margins.
                let epsilon = (6 * next() - 3) * 1e-9 * scale2 / (t * (ax * ax + ay * ay))
                points[k].longitude -= epsilon * ay; points[k].latitude += epsilon * ax
                points[k + half].longitude += epsilon * ay; points[k + half].latitude -= epsilon * ax
            case 3: if n > 3 { points.swapAt(0, n / 2) }
            case 4: points += points.reversed()
            case 5: if trial % 12 == 5 { points = Array(repeating: points[0], count: n) }
            default: break
            }
            let expected = Self.edgeByEdge(points)
            if trial % 6 == 2, expected { nearTheMargin += 1 }
            #expect(PolygonValidity.isStarShapedAroundCentroid(points) == expected, "trial \(trial): \(points)")
            if expected { starShaped += 1 } else { notStarShaped += 1 }
        }
        // Both answers were exercised, and rings within a few margins of the line.
        #expect(starShaped > 500)
        #expect(notStarShaped > 500)
        #expect(nearTheMargin > 100)
    }
}
