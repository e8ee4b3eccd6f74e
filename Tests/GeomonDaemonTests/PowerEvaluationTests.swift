import Foundation
import GeomonCore
import GeomonDaemon
import GeomonEvaluation
import GeomonTestSupport
import Testing

/// The power policy on the real tracks (`PowerTracks`): regions mode, 250 m circles along the
/// tracks, the real engine and driver (`ReplayRun`), against always-on.
///
/// `swift test --filter PowerEvaluation` runs the fast checks (CI); with `GEOMON_POWER_EVAL=1`
/// it evaluates every track at 2 km and 10 km spacing and prints the tables.
@Suite struct PowerEvaluationTests {
    static let full = ProcessInfo.processInfo.environment["GEOMON_POWER_EVAL"] == "1"

    /// The evaluation profile: regions mode with the evaluation's knobs, fences along `track`.
    static func profile(track: [Fix], spacingMeters: Double) -> Profile {
        var profile = Profile(name: "power-eval", mode: .regions)
        profile.sources.gnss = GNSSSourceSettings()
        profile.policy.maxSpeedMetersPerSecond = 45
        profile.policy.wakeMarginMeters = 20
        profile.policy.minSleep = .seconds(10)
        profile.policy.maxSleep = .seconds(600)
        profile.policy.receiver.ttffHot = .seconds(2)
        let env = ProcessInfo.processInfo.environment
        if let a = env["GEOMON_POWER_A"].flatMap(Double.init) { profile.policy.maxAccelerationMetersPerSecondSquared = a }
        if let r = env["GEOMON_POWER_RETRY"].flatMap(Int64.init) { profile.policy.retryMaxInterval = .seconds(r) }
        profile.fences = PowerTracks.fences(along: track, spacingMeters: spacingMeters).enumerated().map {
            Fence(id: "f\($0.offset)", shape: $0.element)
        }
        return profile
    }

    static func evaluate(_ name: String, spacingMeters: Double) throws -> ReplayRun {
        let track = try PowerTracks.load(name)
        var options = ReplayRun.Options()
        options.compareAlwaysOn = true
        return try ReplayRun.evaluate(profile: profile(track: track, spacingMeters: spacingMeters), fixes: track, options: options)
    }

    struct FastCase: Sendable, CustomTestStringConvertible {
        var track: String
        var spacingMeters: Double
        var testDescription: String { "\(track) every \(Int(spacingMeters)) m" }
    }

    static let fastCases = [
        FastCase(track: "genivi_20100403_Z205_Switzerland_short", spacingMeters: 500),
        FastCase(track: "gpxpy_korita-zbevnica", spacingMeters: 2000),
    ]

    @Test(arguments: fastCases)
    func policyFindsEveryAlwaysOnEventWithLessOnTime(_ c: FastCase) throws {
        let run = try Self.evaluate(c.track, spacingMeters: c.spacingMeters)
        let match = try #require(run.match)
        let report = try #require(run.report), baseline = try #require(run.baselineReport)
        #expect((run.baselineEvents?.count ?? 0) >= 1)
        #expect(match.recall == 1.0, "missed \(match.missed.map { "\($0.fenceID ?? "-") \($0.kind) \($0.time)" })")
        #expect((match.latencyP95Seconds ?? 0) <= 60)
        #expect(report.gnssOnSeconds < 0.8 * baseline.gnssOnSeconds)
        #expect(try #require(run.oracle).gnssOnSeconds <= report.gnssOnSeconds)
    }

    @Test(.enabled(if: full), arguments: [2000.0, 10000.0])
    func targetsOnAllTracks(spacingMeters: Double) throws {
        var on = 0.0, base = 0.0
        print("spacing \(Int(spacingMeters)) m | track | % of always-on | recall | p95 s")
        for name in PowerTracks.names {
            let run = try Self.evaluate(name, spacingMeters: spacingMeters)
            let match = try #require(run.match)
            let report = try #require(run.report), baseline = try #require(run.baselineReport)
            on += report.gnssOnSeconds
            base += baseline.gnssOnSeconds
            print("| \(name) | \(100 * report.gnssOnSeconds / baseline.gnssOnSeconds) | \(match.recall) | \(match.latencyP95Seconds ?? 0) |")
            #expect(match.recall == 1.0, "\(name): missed \(match.missed.map { "\($0.fenceID ?? "-") \($0.kind) \($0.time)" })")
            #expect((match.latencyP95Seconds ?? 0) <= 60, "\(name)")
        }
        print("all: \(100 * on / base) % of always-on")
    }
}
