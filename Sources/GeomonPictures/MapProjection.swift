import GeomonCore

#if canImport(Glibc)
import Glibc
#endif

/// A latitude/longitude box, degrees.
struct GeoBox: Equatable {
    var minLatitude: Double
    var maxLatitude: Double
    var minLongitude: Double
    var maxLongitude: Double

    init(minLatitude: Double, maxLatitude: Double, minLongitude: Double, maxLongitude: Double) {
        self.minLatitude = minLatitude
        self.maxLatitude = maxLatitude
        self.minLongitude = minLongitude
        self.maxLongitude = maxLongitude
    }

    /// The box around valid coordinates, nil when there are none.
    init?(_ coordinates: some Sequence<Coordinate>) {
        var box: GeoBox?
        for c in coordinates where c.isDrawable {
            if box == nil {
                box = GeoBox(minLatitude: c.latitude, maxLatitude: c.latitude, minLongitude: c.longitude, maxLongitude: c.longitude)
            } else {
                box?.include(c)
            }
        }
        guard let box else { return nil }
        self = box
    }

    mutating func include(_ c: Coordinate) {
        minLatitude = min(minLatitude, c.latitude)
        maxLatitude = max(maxLatitude, c.latitude)
        minLongitude = min(minLongitude, c.longitude)
        maxLongitude = max(maxLongitude, c.longitude)
    }

    func intersects(_ other: GeoBox) -> Bool {
        minLatitude <= other.maxLatitude && other.minLatitude <= maxLatitude
            && minLongitude <= other.maxLongitude && other.minLongitude <= maxLongitude
    }
}

/// A point on the drawing, pixels, y down.
struct ScreenPoint: Equatable {
    var x: Double
    var y: Double
}

/// Equirectangular projection scaled to fit a box into a pixel rectangle: x is longitude times
/// cos(mid-latitude), y is latitude, one scale for both, so shapes near the middle latitude keep
/// their proportions and the scale bar holds everywhere on the map (within cos-latitude error).
struct MapProjection {
    /// Metres per degree of latitude on the mean-radius sphere (6,371,008.8 m).
    static let metersPerDegree = 6_371_008.8 * Double.pi / 180

    let rect: (x: Double, y: Double, width: Double, height: Double)
    let centerLatitude: Double
    let centerLongitude: Double
    /// cos(centre latitude): how much a degree of longitude shrinks.
    let xScale: Double
    /// Pixels per degree of latitude.
    let pixelsPerDegree: Double

    /// Fits `box` (padded by `padding` of its size, at least `minSpanMeters` across) into `rect`.
    init(fitting box: GeoBox, into rect: (x: Double, y: Double, width: Double, height: Double), padding: Double = 0.06, minSpanMeters: Double = 300) {
        self.rect = rect
        centerLatitude = (box.minLatitude + box.maxLatitude) / 2
        centerLongitude = (box.minLongitude + box.maxLongitude) / 2
        xScale = max(cos(centerLatitude * Double.pi / 180), 0.01)
        let minSpanDegrees = minSpanMeters / Self.metersPerDegree
        let spanY = max((box.maxLatitude - box.minLatitude) * (1 + 2 * padding), minSpanDegrees)
        let spanX = max((box.maxLongitude - box.minLongitude) * xScale * (1 + 2 * padding), minSpanDegrees)
        pixelsPerDegree = min(rect.width / spanX, rect.height / spanY)
    }

    /// The height a map of `box` wants at `width` pixels, clamped to [minHeight, maxHeight].
    static func preferredHeight(for box: GeoBox, width: Double, minHeight: Double, maxHeight: Double) -> Double {
        let mid = (box.minLatitude + box.maxLatitude) / 2
        let spanX = max((box.maxLongitude - box.minLongitude) * max(cos(mid * Double.pi / 180), 0.01), 1e-9)
        let spanY = max(box.maxLatitude - box.minLatitude, 1e-9)
        return min(max(width * spanY / spanX, minHeight), maxHeight)
    }

    func project(_ c: Coordinate) -> ScreenPoint {
        ScreenPoint(
            x: rect.x + rect.width / 2 + (c.longitude - centerLongitude) * xScale * pixelsPerDegree,
            y: rect.y + rect.height / 2 - (c.latitude - centerLatitude) * pixelsPerDegree
        )
    }

    /// Ground metres per pixel (exact along meridians).
    var metersPerPixel: Double { Self.metersPerDegree / pixelsPerDegree }

    /// The geographic box the pixel rectangle shows.
    var visibleBox: GeoBox {
        let halfLat = rect.height / 2 / pixelsPerDegree
        let halfLon = rect.width / 2 / (pixelsPerDegree * xScale)
        return GeoBox(
            minLatitude: centerLatitude - halfLat, maxLatitude: centerLatitude + halfLat,
            minLongitude: centerLongitude - halfLon, maxLongitude: centerLongitude + halfLon
        )
    }
}

extension Coordinate {
    /// Finite, latitude within ±90°; the longitude may be unwrapped beyond ±180° (the picture
    /// draws in one continuous frame around its data).
    var isDrawable: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90
    }
}
