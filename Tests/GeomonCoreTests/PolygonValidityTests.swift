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

    /// Across the antimeridian the rings are judged as the index reads them (unwrapped the
    /// short way): a ring that crosses itself once unwrapped is found, and one that is simple
    /// once unwrapped is not refused for crossing its wrapped image.
    @Test func ringsAcrossTheAntimeridianAreJudgedUnwrapped() {
        let crossing = PolygonRings(shell: Self.ring([(-179.727, 0.66), (179.885, 0.86), (179.844, 0.56), (-179.715, 0.48), (-179.829, 0.2)]))
        #expect(PolygonValidity.problems(of: crossing).isEmpty, "as given, on the plane: no crossing")
        #expect(PolygonValidity.problems(of: PolygonValidity.unwrapped(crossing)).contains { if case .shell(.selfIntersection) = $0 { true } else { false } })
        let simple = PolygonRings(shell: Self.ring([(179.9, 0), (-179.9, 0), (-179.95, 1), (179.95, 0.5), (179.85, 1)]))
        #expect(!PolygonValidity.problems(of: simple).isEmpty, "as given, on the plane: edges cross")
        #expect(PolygonValidity.problems(of: PolygonValidity.unwrapped(simple)).isEmpty)
        // A hole keeps its place in the shell's frame; a polygon that crosses nothing is as given.
        let box = PolygonRings(shell: Self.ring([(179.5, -1), (-179.5, -1), (-179.5, 1), (179.5, 1)]),
                               holes: [Self.ring([(179.9, -0.1), (-179.9, -0.1), (-179.9, 0.1), (179.9, 0.1)])])
        #expect(PolygonValidity.problems(of: PolygonValidity.unwrapped(box)).isEmpty)
        let plain = PolygonRings(shell: square)
        #expect(PolygonValidity.unwrapped(plain) == plain)
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

    @Test func holesMustNotOverlap() {
        let shell = Self.ring([(0, 0), (20, 0), (20, 20), (0, 20)])
        let a = Self.ring([(2, 2), (8, 2), (8, 8), (2, 8)])
        let crossing = Self.ring([(6, 6), (12, 6), (12, 12), (6, 12)])
        let nested = Self.ring([(3, 3), (5, 3), (5, 5)])
        let apart = Self.ring([(12, 2), (16, 2), (16, 6)])
        let cornerTouch = Self.ring([(8, 8), (12, 8), (12, 12)])
        let edgeSharing = Self.ring([(8, 2), (11, 2), (11, 8), (8, 8)])
        func problems(_ holes: [[Coordinate]]) -> [PolygonValidity.PolygonProblem] {
            PolygonValidity.problems(of: PolygonRings(shell: shell, holes: holes))
        }
        #expect(problems([a, crossing]) == [.holesOverlap(0, 1)])
        #expect(problems([nested, apart, a]) == [.holesOverlap(0, 2)])
        #expect(problems([a, a]) == [.holesOverlap(0, 1)])
        #expect(problems([a, Array(a.reversed())]) == [.holesOverlap(0, 1)])
        // Touching at a corner or along an edge from outside leaves the common part empty.
        #expect(problems([a, apart, cornerTouch, edgeSharing]) == [])
        // An L-shaped hole and a triangle in its notch whose corners lie on the L's edges.
        let lShape = Self.ring([(2, 2), (10, 2), (10, 5), (5, 5), (5, 10), (2, 10)])
        let inNotch = Self.ring([(10, 5), (5, 10), (5, 5)])
        #expect(problems([lShape, inNotch]) == [])
        #expect(problems([lShape, Self.ring([(3, 3), (4, 3), (4, 4)])]) == [.holesOverlap(0, 1)])
        // A square whose corners and edge middles all lie on a pinwheel's edges, wholly inside
        // it: the pieces of its edges between the pinwheel's vertices show it.
        let pinwheel = Self.ring([(2, 0), (6, 0), (4, 2), (4, 6), (2, 4), (-2, 4), (0, 2), (0, -2)])
        let square = Self.ring([(0, 0), (4, 0), (4, 4), (0, 4)])
        let wide = Self.ring([(-5, -5), (10, -5), (10, 10), (-5, 10)])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: wide, holes: [pinwheel, square])) == [.holesOverlap(0, 1)])
        // Two holes meeting where a vertex of one lies on an edge of the other in the file's
        // decimals, a rounding error beside it in binary: a touch.
        let decimalShell = Self.ring([(6.6, 46.73), (6.66, 46.73), (6.66, 46.76), (6.6, 46.76)])
        let t1 = Self.ring([(6.6229, 46.7418), (6.6319, 46.7514), (6.6133, 46.7508)])
        let t2 = Self.ring([(6.6274, 46.7466), (6.637, 46.7376), (6.646, 46.7472)])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: decimalShell, holes: [t1, t2])) == [])
        // Each pair once, in index order, however many overlap.
        #expect(problems([crossing, a, nested]) == [.holesOverlap(0, 1), .holesOverlap(1, 2)])
        // A hole outside the shell is reported as such, not also as overlapping.
        let outside = Self.ring([(30, 30), (34, 30), (34, 34)])
        #expect(problems([outside, outside]) == [.holeOutsideShell(0), .holeOutsideShell(1)])
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

    /// A hole touching its shell at one point (valid: OGC Simple Features allows it) whose
    /// vertex, written with six decimals, lands 3·10⁻⁷° outside the shell's slanted edge.
    @Test func aHoleTouchingItsShellAtAPointWrittenInDecimalsIsInside() {
        // The shell's south edge runs from (8.0, 47.0) to (8.3, 47.1); a third of the way along
        // it lies (8.1, 47.0333…), written 47.033333: south of the edge, outside the shell.
        let shell = Self.ring([(8.0, 47.0), (8.3, 47.1), (8.3, 47.5), (8.0, 47.5)])
        let touching = Self.ring([(8.1, 47.033333), (8.2, 47.3), (8.05, 47.3)])
        #expect(!PolygonValidity.pointIsInsideOrOn(touching[0], ring: shell))
        #expect(PolygonValidity.problems(of: PolygonRings(shell: shell, holes: [touching])) == [])
        // 10⁻⁴° (about 10 m) outside is a hole that leaves its shell.
        let leaving = Self.ring([(8.1, 47.0332), (8.2, 47.3), (8.05, 47.3)])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: shell, holes: [leaving])) == [.holeOutsideShell(0)])
        // A hole that leaves through two of its vertices, each within the touch distance of the
        // edge: the stretch between them lies outside, whichever vertex the ring starts at.
        let square = Self.ring([(0, 0), (10, 0), (10, 10), (0, 10)])
        let through = Self.ring([(5, 5), (9.9999995, 5), (20, 5), (20, 6), (9.9999995, 6)])
        for start in through.indices {
            let rotated = Array(through[start...] + through[..<start])
            #expect(PolygonValidity.problems(of: PolygonRings(shell: square, holes: [rotated])) == [.holeOutsideShell(0)], "from \(start)")
        }
        // A hole on the shell's boundary all round (the shell again, 5·10⁻⁷° out) has no inside.
        let again = Self.ring([(-0.0000005, -0.0000005), (10.0000005, -0.0000005), (10.0000005, 10.0000005), (-0.0000005, 10.0000005)])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: square, holes: [again])) == [.holeOutsideShell(0)])
        // A hole filling a notch cut into the shell, its edges on the shell's: outside.
        let notched = Self.ring([(0, 0), (10, 0), (10, 4), (6, 4), (6, 6), (10, 6), (10, 10), (0, 10)])
        let notch = Self.ring([(6, 4), (10, 4), (10, 6), (6, 6)])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: notched, holes: [notch])) == [.holeOutsideShell(0)])
        // Touching the shell at two corners from inside is still inside.
        let corners = Self.ring([(0, 0), (5, 2), (10, 10), (2, 5)])
        #expect(PolygonValidity.problems(of: PolygonRings(shell: square, holes: [corners])) == [])
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
