/// GNSS on-time split by why the receiver was on, for the replay report.
///
/// Labels: `acquire KIND` from a switch-on to the first fix after it (KIND: the switch-on's
/// reason, e.g. `scheduled-wake`, `retry` after a fix timeout), then `on KIND` while the policy keeps the
/// receiver on after a fix (KIND: that decision's reason, e.g. `confirming`, `boundary-near`).
/// The seconds add up to the receiver model's on-time.
public struct OnTimeLedger: Hashable, Sendable {
    public private(set) var seconds: [String: Double] = [:]
    private var label: String?
    private var since: UTCTime?

    public init() {}

    /// Credits the time since the last mark to the current label, then switches to `label`
    /// (nil: the receiver is off).
    public mutating func mark(_ now: UTCTime, label newLabel: String?) {
        if let label, let since, now > since {
            seconds[label, default: 0] += (now - since).secondsValue
        }
        label = newLabel
        since = now
    }

    /// The label currently running, if the receiver is on.
    public var current: String? { label }

    /// Every label with its seconds, sorted by label (deterministic).
    public var entries: [(label: String, seconds: Double)] {
        seconds.keys.sorted().map { ($0, seconds[$0] ?? 0) }
    }
}
