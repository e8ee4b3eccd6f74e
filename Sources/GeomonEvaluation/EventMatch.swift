public import GeomonCore

/// How a run's events compare with a baseline's (always-on): recall, extras, latency.
///
/// Matching: baseline events in time order; each takes the earliest not yet matched candidate
/// event with the same fence and kind whose time is within `window` of it (either side).
/// Latency is candidate time minus baseline time. Percentiles use the nearest-rank method.
public struct EventMatch: Hashable, Sendable {
    public var baselineCount: Int
    public var matched: Int
    /// Candidate events with no baseline counterpart.
    public var extra: Int
    /// Matched latencies in seconds, in baseline order.
    public var latenciesSeconds: [Double]
    /// Baseline events with no counterpart.
    public var missed: [GeoEvent]

    /// Share of baseline events found (1 when the baseline has none).
    public var recall: Double { baselineCount == 0 ? 1 : Double(matched) / Double(baselineCount) }
    public var latencyP50Seconds: Double? { percentile(0.50) }
    public var latencyP95Seconds: Double? { percentile(0.95) }

    public init(baseline: [GeoEvent], candidate: [GeoEvent], window: Duration) {
        let base = baseline.sorted { ($0.time, $0.id) < ($1.time, $1.id) }
        var used = [Bool](repeating: false, count: candidate.count)
        var latencies: [Double] = []
        var missed: [GeoEvent] = []
        for b in base {
            var best: Int?
            for (i, c) in candidate.enumerated() where !used[i] && c.fenceID == b.fenceID && c.kind == b.kind {
                let delta = c.time - b.time
                guard delta <= window, delta >= .zero - window else { continue }
                if best.map({ c.time < candidate[$0].time }) ?? true { best = i }
            }
            if let best {
                used[best] = true
                latencies.append((candidate[best].time - b.time).secondsValue)
            } else {
                missed.append(b)
            }
        }
        baselineCount = base.count
        matched = latencies.count
        extra = used.filter { !$0 }.count
        latenciesSeconds = latencies
        self.missed = missed
    }


    /// Nearest-rank percentile of the matched latencies.
    public func percentile(_ p: Double) -> Double? {
        guard !latenciesSeconds.isEmpty else { return nil }
        let sorted = latenciesSeconds.sorted()
        let rank = max(1, Int((p * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }
}
