import Foundation
import GeomonCore
import GeomonTestSupport

/// The evaluation on the real tracks (`PowerTracks`) with the stand-in oracle.
enum PowerEvaluationSupport {
    /// The evaluation profile: regions mode with its knobs.
    static func profile() -> Profile {
        var profile = Profile(name: "power-eval", mode: .regions)
        profile.sources.gnss = GNSSSourceSettings()
        profile.policy.maxSpeedMetersPerSecond = 45
        profile.policy.wakeMarginMeters = 20
        profile.policy.minSleep = .seconds(10)
        profile.policy.maxSleep = .seconds(600)
        profile.policy.receiver.ttffHot = .seconds(2)
        return profile
    }

    struct Row {
        var name: String
        var fences: Int
        var policy: SimulationRun.Result
        var baseline: SimulationRun.Result
        var match: EventMatch
        var oracle: OracleBound
    }

    static func evaluate(name: String, track: [Fix], spacingMeters: Double, tune: (inout PowerConfiguration) -> Void = { _ in }) -> Row {
        let profile = profile()
        let shapes = PowerTracks.fences(along: track, spacingMeters: spacingMeters)
        let index = FenceIndex(shapes: shapes)
        let ids = shapes.indices.map { "f\($0)" }
        var config = PowerConfiguration(profile: profile)
        let env = ProcessInfo.processInfo.environment
        if let a = env["GEOMON_POWER_A"].flatMap(Double.init) { config.maxAccelerationMetersPerSecondSquared = a }
        if let rule = env["GEOMON_POWER_RULE"].flatMap(ShortSleepRule.init(rawValue:)) { config.shortSleep = rule }
        if let r = env["GEOMON_POWER_RETRY"].flatMap(Int64.init) { config.maxFixTimeoutRetry = .seconds(r) }
        tune(&config)
        let oracle = BoundaryCertaintyOracle(
            index: index, fenceIDs: ids, hysteresisMeters: profile.transitions.hysteresisMeters,
            confirm: profile.transitions.confirm, minAccuracyMeters: config.minAccuracyMeters
        )
        let c = PowerComparison(simulation: SimulationRun(configuration: config, receiver: profile.policy.receiver, index: index), track: track, oracle: oracle)
        return Row(name: name, fences: shapes.count, policy: c.policy, baseline: c.baseline, match: c.match, oracle: c.oracle)
    }

    static func table(_ rows: [Row], title: String) -> String {
        func f(_ v: Double?, _ d: Int = 0) -> String { v.map { String(format: "%.\(d)f", $0) } ?? "-" }
        var lines = [title,
                     "| track | track s | fences | crossings | always-on s | policy on s | % of always-on | oracle s | wakeups | events (base/policy) | recall | extra | p50 s | p95 s | energy mWh (policy/always-on) |",
                     "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        var sums = (track: 0.0, base: 0.0, on: 0.0, oracle: 0.0, eP: 0.0, eB: 0.0, fences: 0, crossings: 0, wake: 0, bEv: 0, pEv: 0, matched: 0, extra: 0)
        var lat: [Double] = []
        for r in rows {
            let p = r.policy.report, b = r.baseline.report
            lines.append("| \(r.name) | \(f(p.trackSeconds)) | \(r.fences) | \(r.oracle.crossings) | \(f(b.gnssOnSeconds)) | \(f(p.gnssOnSeconds)) | \(f(100 * p.gnssOnSeconds / b.gnssOnSeconds, 1)) | \(f(r.oracle.gnssOnSeconds)) | \(p.wakeups) | \(b.events)/\(p.events) | \(f(r.match.recall, 3)) | \(r.match.extra) | \(f(r.match.latencyP50Seconds, 1)) | \(f(r.match.latencyP95Seconds, 1)) | \(f(p.energyMilliwattHours, 1))/\(f(b.energyMilliwattHours, 1)) |")
            sums.track += p.trackSeconds; sums.base += b.gnssOnSeconds; sums.on += p.gnssOnSeconds; sums.oracle += r.oracle.gnssOnSeconds
            sums.eP += p.energyMilliwattHours; sums.eB += b.energyMilliwattHours; sums.fences += r.fences; sums.crossings += r.oracle.crossings
            sums.wake += p.wakeups; sums.bEv += b.events; sums.pEv += p.events; sums.matched += r.match.matched; sums.extra += r.match.extra
            lat += r.match.latenciesSeconds
        }
        var all = EventMatch(baseline: [], candidate: [], window: .zero)
        all.latenciesSeconds = lat
        let recall = sums.bEv == 0 ? 1 : Double(sums.matched) / Double(sums.bEv)
        lines.append("| **all** | \(f(sums.track)) | \(sums.fences) | \(sums.crossings) | \(f(sums.base)) | \(f(sums.on)) | **\(f(100 * sums.on / sums.base, 1))** | \(f(sums.oracle)) | \(sums.wake) | \(sums.bEv)/\(sums.pEv) | \(f(recall, 3)) | \(sums.extra) | \(f(all.latencyP50Seconds, 1)) | \(f(all.latencyP95Seconds, 1)) | \(f(sums.eP, 1))/\(f(sums.eB, 1)) |")
        return lines.joined(separator: "\n")
    }
}
