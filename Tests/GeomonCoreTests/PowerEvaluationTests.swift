import Foundation
import GeomonCore
import Testing

/// The issue's targets on the real tracks (regions mode, circles of 250 m along the tracks).
///
/// `swift test --filter PowerEvaluation` runs the fast check (the short tracks); with
/// `GEOMON_POWER_EVAL=1` it evaluates every track at both spacings and prints the tables.
@Suite struct PowerEvaluationTests {
    static let full = ProcessInfo.processInfo.environment["GEOMON_POWER_EVAL"] == "1"

    @Test(arguments: [2000.0, 10000.0])
    func targetsHoldOnAllTracks(spacingMeters: Double) throws {
        let names = Self.full ? PowerEvaluationSupport.trackNames
            : ["genivi_20100403_Z205_Switzerland_short", "gpxpy_cerknicko-jezero", "gpxpy_korita-zbevnica"]
        var rows: [PowerEvaluationSupport.Row] = []
        for name in names {
            let track = try PowerEvaluationSupport.loadTrack(name)
            let row = PowerEvaluationSupport.evaluate(name: name, track: track, spacingMeters: spacingMeters)
            #expect(row.match.recall == 1.0, "\(name): missed \(row.match.missed.map { "\($0.fenceID ?? "-") \($0.kind) \($0.time)" })")
            if let p95 = row.match.latencyP95Seconds { #expect(p95 <= 60, "\(name): p95 \(p95) s") }
            rows.append(row)
        }
        let on = rows.map(\.policy.report.gnssOnSeconds).reduce(0, +)
        let base = rows.map(\.baseline.report.gnssOnSeconds).reduce(0, +)
        print(PowerEvaluationSupport.table(rows, title: "spacing \(Int(spacingMeters)) m"))
        if Self.full {
            #expect(on <= (spacingMeters < 5000 ? 0.25 : 0.10) * base)
        }
    }
}
