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
        // The candidates of each fence and kind, by time (then by their order): the earliest
        // unused one in a baseline event's window is found by a binary search and a short scan,
        // not by a pass over every candidate.
        struct Group {
            var indices: [Int] = []
            /// Every index before this one is used.
            var firstUnused = 0
        }
        var groups: [String: Group] = [:]
        func key(_ e: GeoEvent) -> String { (e.fenceID ?? "") + "\u{0}" + e.kind.rawValue + (e.fenceID == nil ? "\u{1}" : "") }
        for (i, c) in candidate.enumerated() { groups[key(c), default: Group()].indices.append(i) }
        for k in groups.keys { groups[k]?.indices.sort { (candidate[$0].time, $0) < (candidate[$1].time, $1) } }
        for b in base {
            var best: Int?
            let k = key(b)
            if var group = groups[k] {
                let earliest = b.time - window, latest = b.time + window
                var lo = group.firstUnused, hi = group.indices.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if candidate[group.indices[mid]].time < earliest { lo = mid + 1 } else { hi = mid }
                }
                var j = lo
                while j < group.indices.count, candidate[group.indices[j]].time <= latest {
                    if !used[group.indices[j]] {
                        best = group.indices[j]
                        break
                    }
                    j += 1
                }
                if let best { used[best] = true }
                while group.firstUnused < group.indices.count, used[group.indices[group.firstUnused]] { group.firstUnused += 1 }
                groups[k] = group
            }
            if let best {
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
