import Foundation
import GeomonCore
import GeomonTestSupport
import Testing

/// Geodesy against GeographicLib's reference geodesics (Karney's test set).
struct GeodesyTests {
    struct Row {
        var a: Coordinate, b: Coordinate
        var azimuth1: Double, distanceMeters: Double
    }

    static let rows: [Row] = {
        let text = (try? String(contentsOf: TestSupport.fixture("geodesic/GeodTest-subset.dat"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ").compactMap { Double($0) }
            guard f.count >= 7 else { return nil }
            return Row(a: Coordinate(latitude: f[0], longitude: f[1]), b: Coordinate(latitude: f[3], longitude: f[4]),
                       azimuth1: f[2], distanceMeters: f[6])
        }
    }()

    static func tolerance(_ s: Double) -> Double { max(0.5, s * 0.001) }

    @Test func fixtureHasShortAndLongRows() {
        #expect(Self.rows.count > 1300)
        #expect(Self.rows.filter { $0.distanceMeters < 100_000 }.count == 1008)
    }

    @Test func ellipsoidalDistanceMatchesGeographicLibUpTo100km() {
        var worst = 0.0
        for row in Self.rows where row.distanceMeters < 100_000 {
            let d = Geodesy.distanceMeters(from: row.a, to: row.b)
            worst = max(worst, abs(d - row.distanceMeters))
            #expect(abs(d - row.distanceMeters) <= Self.tolerance(row.distanceMeters), "\(row)")
        }
        #expect(worst < 0.001) // Vincenty is sub-millimetre here
    }

    @Test func ellipsoidalDistanceIsWithinBoundForLongLinesThatConverge() {
        for row in Self.rows where row.distanceMeters >= 100_000 && row.distanceMeters < 19_000_000 {
            let d = Geodesy.distanceMeters(from: row.a, to: row.b)
            #expect(abs(d - row.distanceMeters) <= Self.tolerance(row.distanceMeters), "\(row)")
        }
    }

    @Test func localDistanceMeetsBoundUpTo100kmAwayFromPoles() {
        var checked = 0
        for row in Self.rows where row.distanceMeters < 100_000
            && abs(row.a.latitude) < 85 && abs(row.b.latitude) < 85 {
            let d = Geodesy.localDistanceMeters(from: row.a, to: row.b)
            #expect(abs(d - row.distanceMeters) <= Self.tolerance(row.distanceMeters), "\(row) got \(d)")
            checked += 1
        }
        #expect(checked > 500)
    }

    @Test func initialBearingMatchesReference() {
        for row in Self.rows where row.distanceMeters > 1 && row.distanceMeters < 100_000 && abs(row.a.latitude) < 89.9 {
            let azimuth = Geodesy.initialBearingDegrees(from: row.a, to: row.b)
            var diff = abs(azimuth - Geodesy.normalizedBearing(row.azimuth1))
            diff = min(diff, 360 - diff)
            // Very short lines have ill-conditioned azimuths; 1e-5° is ~0.1 mm at 1 m.
            #expect(diff < max(1e-6, 1e-2 / row.distanceMeters), "\(row) got \(azimuth)")
        }
    }

    @Test func destinationLandsOnReferenceEndpoint() {
        for row in Self.rows where row.distanceMeters < 100_000 && abs(row.a.latitude) < 89.9 {
            let q = Geodesy.destination(from: row.a, bearingDegrees: row.azimuth1, distanceMeters: row.distanceMeters)
            let miss = Geodesy.distanceMeters(from: q, to: row.b)
            #expect(miss < 0.01, "\(row) got \(q)")
        }
    }

    @Test func localDestinationRoundTripsWithLocalDistance() {
        let start = Coordinate(latitude: 47.37, longitude: 8.54)
        for bearing in stride(from: 0.0, to: 360, by: 15) {
            let q = Geodesy.localDestination(from: start, bearingDegrees: bearing, distanceMeters: 5000)
            #expect(abs(Geodesy.distanceMeters(from: start, to: q) - 5000) < 5)
            var diff = abs(Geodesy.localBearingDegrees(from: start, to: q) - bearing)
            diff = min(diff, 360 - diff)
            #expect(diff < 0.1)
        }
    }

    @Test func distanceAcrossTheAntimeridianTakesTheShortWay() {
        let a = Coordinate(latitude: -17, longitude: 179.99)
        let b = Coordinate(latitude: -17, longitude: -179.99)
        let d = Geodesy.distanceMeters(from: a, to: b)
        #expect(d > 2000 && d < 2200)
        #expect(abs(Geodesy.localDistanceMeters(from: a, to: b) - d) < 1)
    }
}
