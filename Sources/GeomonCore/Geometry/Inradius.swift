#if canImport(Glibc)
import Glibc
#endif

/// The radius of the largest circle inside a fence: the distance from its "pole of
/// inaccessibility" to the nearest boundary.
///
/// A fix counts as certainly inside only where its signed distance is at most `-(a + h)`, so a
/// fence whose inradius is under `a + h` can never be certainly entered by a fix of accuracy
/// `a`. Circles: the radius; corridors: half the width; polygons (holes count as boundary): the
/// cell search of Mapbox's polylabel on a local plane in metres (the polygon's own, centred on
/// its bounding box; exact to well under a metre for fences of everyday size), stopped as soon
/// as the circle found reaches `limit`, since the callers only need to know whether it does.
public enum Inradius {
    /// The inradius in metres, at most `limit`: `limit` when the shape's is at least that,
    /// else its estimate within `precisionMeters`.
    public static func meters(of shape: FenceShape, upTo limit: Double, precisionMeters: Double = 1) -> Double {
        switch shape {
        case let .circle(_, radius):
            return min(radius, limit)
        case let .corridor(_, width):
            return min(width / 2, limit)
        case let .polygons(members):
            var best = 0.0
            for member in members {
                best = max(best, polygon(member, upTo: limit, precision: precisionMeters))
                if best >= limit { return limit }
            }
            return best
        }
    }

    /// Cells searched at most per polygon (a pathological ring still returns, with its best).
    static let maxCells = 20_000

    /// Cells along the first grid's longer side at most. The search starts from square cells
    /// as wide as the polygon's bounding box is thin, so a sliver (1,000 km long and 0.1 mm
    /// wide) would start from ten billion cells; larger cells cover the box as well, and the
    /// search divides the ones that may hold a larger circle.
    static let maxGridSide = 100.0

    /// The side of the first grid's cells for a bounding box `width` × `height` (metres).
    public static func gridCellSize(width: Double, height: Double) -> Double {
        max(min(width, height), max(width, height) / maxGridSide)
    }

    private struct Cell {
        var x: Double, y: Double, half: Double, distance: Double
        /// The largest distance any point of the cell can have.
        var potential: Double { distance + half * 2.squareRoot() }
    }

    private static func polygon(_ rings: PolygonRings, upTo limit: Double, precision: Double) -> Double {
        let plane = Plane(rings)
        guard plane.width > 0, plane.height > 0 else { return 0 }
        let size = gridCellSize(width: plane.width, height: plane.height)
        var heap = MaxHeap()
        var best = plane.cell(x: plane.centroid.x, y: plane.centroid.y, half: 0)
        let middle = plane.cell(x: plane.width / 2, y: plane.height / 2, half: 0)
        if middle.distance > best.distance { best = middle }
        if best.distance >= limit { return limit }
        var y = 0.0
        while y < plane.height {
            var x = 0.0
            while x < plane.width {
                heap.push(plane.cell(x: x + size / 2, y: y + size / 2, half: size / 2))
                x += size
            }
            y += size
        }
        var searched = 0
        while let cell = heap.pop(), searched < maxCells {
            searched += 1
            if cell.distance > best.distance {
                best = cell
                if best.distance >= limit { return limit }
            }
            if cell.potential - best.distance <= precision { continue }
            let h = cell.half / 2
            for (dx, dy) in [(-h, -h), (h, -h), (-h, h), (h, h)] {
                heap.push(plane.cell(x: cell.x + dx, y: cell.y + dy, half: h))
            }
        }
        return max(0, min(best.distance, limit))
    }

    /// A polygon's rings on a local plane in metres (x east, y north, from the bounding box's
    /// south-west corner).
    private struct Plane {
        var rings: [[(x: Double, y: Double)]] = []
        var width = 0.0, height = 0.0
        var centroid = (x: 0.0, y: 0.0)

        init(_ polygon: PolygonRings) {
            let shell = polygon.shell
            guard let first = shell.first else { return }
            var south = first.latitude, north = first.latitude
            var west = 0.0, east = 0.0
            for c in shell {
                south = min(south, c.latitude)
                north = max(north, c.latitude)
                let d = Geodesy.longitudeDelta(first.longitude, c.longitude)
                west = min(west, d)
                east = max(east, d)
            }
            let metric = Geodesy.metersPerDegree(atLatitude: (south + north) / 2)
            func project(_ c: Coordinate) -> (x: Double, y: Double) {
                ((Geodesy.longitudeDelta(first.longitude, c.longitude) - west) * metric.longitude, (c.latitude - south) * metric.latitude)
            }
            rings = ([shell] + polygon.holes).map { $0.map(project) }
            width = (east - west) * metric.longitude
            height = (north - south) * metric.latitude
            // The shell's area centroid, a good first guess for convex-ish shapes.
            var area = 0.0, cx = 0.0, cy = 0.0
            let points = rings[0]
            for i in points.indices {
                let a = points[i], b = points[(i + 1) % points.count]
                let cross = a.x * b.y - b.x * a.y
                area += cross
                cx += (a.x + b.x) * cross
                cy += (a.y + b.y) * cross
            }
            centroid = area != 0 ? (cx / (3 * area), cy / (3 * area)) : points[0]
        }

        func cell(x: Double, y: Double, half: Double) -> Cell {
            Cell(x: x, y: y, half: half, distance: signedDistance(x, y))
        }

        /// Distance to the nearest ring edge, positive inside (even-odd over all rings).
        func signedDistance(_ px: Double, _ py: Double) -> Double {
            var inside = false
            var nearest = Double.infinity
            for ring in rings where ring.count >= 2 {
                var j = ring.count - 1
                for i in ring.indices {
                    let a = ring[i], b = ring[j]
                    if (a.y > py) != (b.y > py), px < (b.x - a.x) * (py - a.y) / (b.y - a.y) + a.x { inside.toggle() }
                    nearest = min(nearest, segmentDistanceSquared(px, py, a, b))
                    j = i
                }
            }
            return (inside ? 1 : -1) * nearest.squareRoot()
        }

        private func segmentDistanceSquared(_ px: Double, _ py: Double, _ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
            var x = a.x, y = a.y
            let dx = b.x - x, dy = b.y - y
            if dx != 0 || dy != 0 {
                let t = ((px - x) * dx + (py - y) * dy) / (dx * dx + dy * dy)
                if t > 1 {
                    x = b.x
                    y = b.y
                } else if t > 0 {
                    x += dx * t
                    y += dy * t
                }
            }
            return (px - x) * (px - x) + (py - y) * (py - y)
        }
    }

    /// A binary max-heap of cells by potential.
    private struct MaxHeap {
        private var items: [Cell] = []

        mutating func push(_ cell: Cell) {
            items.append(cell)
            var i = items.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard items[parent].potential < items[i].potential else { break }
                items.swapAt(parent, i)
                i = parent
            }
        }

        mutating func pop() -> Cell? {
            guard !items.isEmpty else { return nil }
            items.swapAt(0, items.count - 1)
            let top = items.removeLast()
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var largest = i
                if l < items.count, items[l].potential > items[largest].potential { largest = l }
                if r < items.count, items[r].potential > items[largest].potential { largest = r }
                if largest == i { break }
                items.swapAt(i, largest)
                i = largest
            }
            return top
        }
    }
}
