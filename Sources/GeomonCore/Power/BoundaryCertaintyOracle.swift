/// A minimal transition engine for simulations: accuracy-aware sides with confirmation.
///
/// For fence `i` with signed distance `s` (negative inside), accuracy `a` and hysteresis `h`:
/// certainly inside when `s ≤ −(a + h)`, certainly outside when `s ≥ a + h`, else uncertain
/// (changes nothing). A new side needs `confirm` consecutive certain fixes showing it; the event
/// carries the time of the first of them. The first certain side is recorded silently. GNSS fixes
/// worse than `minAccuracyMeters` are ignored; coarse fixes count with their own accuracy.
public struct BoundaryCertaintyOracle: TransitionOracle, Sendable {
    public let index: FenceIndex
    public let fenceIDs: [String]
    public let hysteresisMeters: Double
    public let confirm: Int
    public let minAccuracyMeters: Double
    private var inside: [Bool?]
    private var candidate: [Candidate?]

    private struct Candidate: Hashable, Sendable {
        var inside: Bool
        var count: Int
        var firstFix: Fix
    }

    public init(index: FenceIndex, fenceIDs: [String], hysteresisMeters: Double, confirm: Int, minAccuracyMeters: Double) {
        self.index = index
        self.fenceIDs = fenceIDs
        self.hysteresisMeters = hysteresisMeters
        self.confirm = max(1, confirm)
        self.minAccuracyMeters = minAccuracyMeters
        inside = Array(repeating: nil, count: index.count)
        candidate = Array(repeating: nil, count: index.count)
    }

    public mutating func observe(_ fix: Fix) -> TransitionObservation {
        guard fix.source == .coarse || fix.horizontalAccuracyMeters <= minAccuracyMeters else {
            return TransitionObservation(events: [], allCertain: false, transitionPending: candidate.contains { $0 != nil })
        }
        let band = fix.horizontalAccuracyMeters + hysteresisMeters
        var sides = [Bool?](repeating: nil, count: index.count)
        for i in 0..<index.count {
            let s = index.signedDistance(fence: i, to: fix.coordinate)
            sides[i] = s <= -band ? true : (s >= band ? false : nil)
        }
        var events: [GeoEvent] = []
        var allCertain = true
        for i in 0..<index.count {
            guard let side = sides[i] else {
                allCertain = false
                continue
            }
            guard let current = inside[i] else {
                inside[i] = side
                continue
            }
            if side == current {
                candidate[i] = nil
                continue
            }
            var c = candidate[i] ?? Candidate(inside: side, count: 0, firstFix: fix)
            c.count += 1
            if c.count >= confirm {
                inside[i] = side
                candidate[i] = nil
                let kind: EventKind = side ? .enter : .exit
                let first = c.firstFix
                events.append(GeoEvent(
                    id: "\(fenceIDs[i])-\(kind.rawValue)-\(first.time.millisecondsSince1970)",
                    kind: kind, fenceID: fenceIDs[i], time: first.time, coordinate: first.coordinate,
                    accuracyMeters: first.horizontalAccuracyMeters, rule: "\(side ? "inside" : "outside") confirmed by \(confirm) fixes"
                ))
            } else {
                candidate[i] = c
            }
        }
        let pending = candidate.contains { $0 != nil }
        return TransitionObservation(events: events, allCertain: allCertain && !pending, transitionPending: pending)
    }
}
