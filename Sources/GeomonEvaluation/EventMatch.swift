public import GeomonCore

/// How a run's events compare with a baseline's (always-on): recall, extras, latency.
///
/// Matching: an event matches one of the other run with the same fence and kind within
/// `window` of it (either side), each at most once. Of all matchings, the one with the most
/// pairs and, among those, the least total |latency|: the baseline's event that the run missed
/// is the one left over, not a later one its matches were shifted past (a greedy earliest-first
/// matching finds as many pairs, but pairs a missed enter with the run's next one, and so on
/// down the fence, leaving the last unmatched and its latencies a window long). Equal windows
/// let crossing pairs be uncrossed at no cost, so the best matching keeps time order and each
/// fence and kind is aligned by dynamic programming, cut where no pair can span the gap.
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
        func key(_ e: GeoEvent) -> String { (e.fenceID ?? "") + "\u{0}" + e.kind.rawValue + (e.fenceID == nil ? "\u{1}" : "") }
        var baseGroups: [String: [Int]] = [:], candidateGroups: [String: [Int]] = [:]
        for (i, b) in base.enumerated() { baseGroups[key(b), default: []].append(i) }
        for (i, c) in candidate.enumerated() { candidateGroups[key(c), default: []].append(i) }
        // partner[i]: the candidate matched to base[i].
        var partner = [Int?](repeating: nil, count: base.count)
        var used = [Bool](repeating: false, count: candidate.count)
        let w = window.wholeMilliseconds
        for (k, bs) in baseGroups {
            guard var cs = candidateGroups[k] else { continue }
            cs.sort { (candidate[$0].time, $0) < (candidate[$1].time, $1) }
            let bt = bs.map { base[$0].time.millisecondsSince1970 }, ct = cs.map { candidate[$0].time.millisecondsSince1970 }
            for (i, j) in Self.align(bt, ct, window: w) {
                partner[bs[i]] = cs[j]
                used[cs[j]] = true
            }
        }
        var latencies: [Double] = []
        var missed: [GeoEvent] = []
        for (i, b) in base.enumerated() {
            if let c = partner[i] {
                latencies.append((candidate[c].time - b.time).secondsValue)
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

    /// The most pairs `(i, j)` with `|a[i] − b[j]| ≤ window`, each index at most once, and among
    /// those the least total `|a[i] − b[j]|`; `a` and `b` sorted. Runs that a gap wider than the
    /// window separates are aligned apart; a run too large for the table (over 4 million cells:
    /// thousands of one fence's events within windows of each other) takes the earliest
    /// candidate in each window, as many pairs but not the least latency.
    static func align(_ a: [Int64], _ b: [Int64], window: Int64) -> [(Int, Int)] {
        var pairs: [(Int, Int)] = []
        // Walk both lists in time order; a gap wider than the window between consecutive
        // events (of either list) ends a run.
        var i = 0, j = 0, runA = 0, runB = 0
        var last: Int64?
        func close() {
            if i > runA, j > runB {
                pairs += alignRun(Array(a[runA..<i]), Array(b[runB..<j]), window: window).map { ($0.0 + runA, $0.1 + runB) }
            }
            runA = i; runB = j
        }
        while i < a.count || j < b.count {
            let takeA = j >= b.count || (i < a.count && a[i] <= b[j])
            let t = takeA ? a[i] : b[j]
            if let last, t - last > window { close() }
            if takeA { i += 1 } else { j += 1 }
            last = t
        }
        close()
        return pairs
    }

    private static func alignRun(_ a: [Int64], _ b: [Int64], window: Int64) -> [(Int, Int)] {
        let n = a.count, m = b.count
        guard n * m <= 4_000_000 else {
            var pairs: [(Int, Int)] = [], j = 0
            for (i, t) in a.enumerated() {
                while j < m, b[j] < t - window { j += 1 }
                if j < m, b[j] <= t + window { pairs.append((i, j)); j += 1 }
            }
            return pairs
        }
        // best[i][j]: (pairs, −total latency) of the suffixes a[i...], b[j...].
        let width = m + 1
        var count = [Int32](repeating: 0, count: (n + 1) * width)
        var cost = [Int64](repeating: 0, count: (n + 1) * width)
        func better(_ c1: Int32, _ d1: Int64, than c2: Int32, _ d2: Int64) -> Bool { c1 > c2 || (c1 == c2 && d1 < d2) }
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                var c = count[(i + 1) * width + j], d = cost[(i + 1) * width + j]
                if better(count[i * width + j + 1], cost[i * width + j + 1], than: c, d) {
                    c = count[i * width + j + 1]; d = cost[i * width + j + 1]
                }
                let delta = abs(b[j] - a[i])
                if delta <= window, better(count[(i + 1) * width + j + 1] + 1, cost[(i + 1) * width + j + 1] + delta, than: c, d) {
                    c = count[(i + 1) * width + j + 1] + 1; d = cost[(i + 1) * width + j + 1] + delta
                }
                count[i * width + j] = c
                cost[i * width + j] = d
            }
        }
        var pairs: [(Int, Int)] = []
        var i = 0, j = 0
        while i < n, j < m {
            let here = (count[i * width + j], cost[i * width + j])
            let delta = abs(b[j] - a[i])
            if delta <= window, count[(i + 1) * width + j + 1] + 1 == here.0, cost[(i + 1) * width + j + 1] + delta == here.1 {
                pairs.append((i, j)); i += 1; j += 1
            } else if count[(i + 1) * width + j] == here.0, cost[(i + 1) * width + j] == here.1 {
                i += 1
            } else {
                j += 1
            }
        }
        return pairs
    }

    /// Nearest-rank percentile of the matched latencies.
    public func percentile(_ p: Double) -> Double? {
        guard !latenciesSeconds.isEmpty else { return nil }
        let sorted = latenciesSeconds.sorted()
        let rank = max(1, Int((p * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }
}
