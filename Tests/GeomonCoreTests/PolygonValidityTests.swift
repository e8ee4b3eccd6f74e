import Foundation
import GeomonCore
import Testing

struct PolygonValidityTests {
    static func ring(_ points: [(Double, Double)]) -> [Coordinate] {
        points.map { Coordinate(latitude: $0.1, longitude: $0.0) }
    }

    let square = Self.ring([(0, 0), (1, 0), (1, 1), (0, 1)])

    @Test func squareIsValidOpenOrClosedInEitherOrientation() {
        #expect(PolygonValidity.problems(ofRing: square) == [])
        #expect(PolygonValidity.problems(ofRing: square + [square[0]]) == [])
        #expect(PolygonValidity.problems(ofRing: square.reversed()) == [])
        // Consecutive duplicates are ignored.
        #expect(PolygonValidity.problems(ofRing: [square[0], square[0], square[1], square[2], square[2], square[3]]) == [])
    }

    @Test func tooFewDistinctPoints() {
        #expect(PolygonValidity.problems(ofRing: Self.ring([(0, 0), (1, 1)])) == [.tooFewDistinctPoints(count: 2)])
        #expect(PolygonValidity.problems(ofRing: Self.ring([(0, 0), (1, 1), (0, 0), (1, 1)])) == [.tooFewDistinctPoints(count: 2)])
        #expect(PolygonValidity.problems(ofRing: []) == [.tooFewDistinctPoints(count: 0)])
    }

    @Test func collinearRingHasZeroArea() {
        #expect(PolygonValidity.problems(ofRing: Self.ring([(0, 0), (1, 1), (2, 2)])) == [.zeroArea])
    }

    @Test func bowtieCrosses() {
        let bowtie = Self.ring([(0, 0), (1, 1), (1, 0), (0, 1)])
        let edge = PolygonValidity.Edge.init(from:to:)
        #expect(PolygonValidity.problems(ofRing: bowtie) == [.selfIntersection(edge(0, 1), edge(2, 3))])
    }

    @Test func touchingVertexAndSpikeAreIntersections() {
        // Figure eight through a shared vertex (2, 1).
        let eight = Self.ring([(0, 0), (2, 1), (4, 0), (4, 2), (2, 1), (0, 2)])
        #expect(PolygonValidity.problems(ofRing: eight).count == 1)
        // A spike going out and back along the same line.
        let spike = Self.ring([(0, 0), (2, 0), (3, 0), (2, 0), (2, 2), (0, 2)])
        #expect(PolygonValidity.problems(ofRing: spike).count == 1)
    }

    @Test func invalidCoordinate() {
        #expect(PolygonValidity.problems(ofRing: Self.ring([(0, 0), (1, 91), (1, 1)])) == [.invalidCoordinate(index: 1)])
        #expect(PolygonValidity.problems(ofRing: Self.ring([(0, 0), (.nan, 1), (1, 1)])) == [.invalidCoordinate(index: 1)])
    }

    @Test func holesMustBeInsideTheShell() {
        let shell = Self.ring([(0, 0), (10, 0), (10, 10), (0, 10)])
        let inside = Self.ring([(2, 2), (4, 2), (4, 4)])
        let outside = Self.ring([(12, 2), (14, 2), (14, 4)])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: shell, holes: [inside])) == [])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: shell, holes: [inside, outside])) == [.holeOutsideShell(1)])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: shell, holes: [Self.ring([(1, 1), (2, 2)])])) == [.hole(0, .tooFewDistinctPoints(count: 2))])
        // A C-shaped shell: the hole's vertices are all inside, but an edge leaves the shell.
        let cShape = Self.ring([(0, 0), (10, 0), (10, 3), (3, 3), (3, 7), (10, 7), (10, 10), (0, 10)])
        let bridging = Self.ring([(5, 1), (6, 1), (6, 9), (5, 9)])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: cShape, holes: [bridging])) == [.holeOutsideShell(0)])
    }

    /// 10,000-vertex rings go through the sweep; a crossing added at the end is still found.
    @Test func largeRingsAreChecked() {
        var circle: [Coordinate] = []
        for k in 0..<10_000 {
            let angle = Double(k) * 2 * Double.pi / 10_000
            circle.append(Coordinate(latitude: 46 + 0.01 * sin(angle), longitude: 7 + 0.01 * cos(angle)))
        }
        #expect(PolygonValidity.problems(ofRing: circle) == [])
        var crossed = circle
        crossed.swapAt(100, 5_100)
        let problems = PolygonValidity.problems(ofRing: crossed)
        #expect(problems.count == 1)
        if case .selfIntersection = problems.first {} else { Issue.record("expected a self-intersection, got \(problems)") }
    }
}
