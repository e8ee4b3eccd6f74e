public import GeomonCore

/// GNSS on-time split by why the receiver was on, for the replay report.
///
/// Labels: `acquire KIND` from a switch-on to the first fix after it (KIND: the switch-on's
/// reason, e.g. `scheduled-wake`, `retry` after a fix timeout), then `on KIND` while the policy
/// keeps the receiver on after a fix (KIND: that decision's reason, e.g. `confirming`,
/// `boundary-near`). The seconds add up to the receiver model's on-time.
public struct OnTimeLedger: Hashable, Sendable {
    /// What the receiver is doing for a reason: acquiring its first fix, or on after one.
    public struct Label: Hashable, Sendable {
        public var acquiring: Bool
        public var kind: PowerReason.Kind

        public static func acquire(_ kind: PowerReason.Kind) -> Label { Label(acquiring: true, kind: kind) }
        public static func on(_ kind: PowerReason.Kind) -> Label { Label(acquiring: false, kind: kind) }

        /// `acquire scheduled-wake`, `on confirming`.
        public var text: String { (acquiring ? "acquire " : "on ") + kind.rawValue }
    }

    public private(set) var seconds: [Label: Double] = [:]
    private var label: Label?
    private var since: UTCTime?

    public init() {}

    /// Credits the time since the last mark to the current label, then switches to `label`
    /// (nil: the receiver is off).
    public mutating func mark(_ now: UTCTime, label newLabel: Label?) {
        if let label, let since, now > since {
            seconds[label, default: 0] += (now - since).secondsValue
        }
        label = newLabel
        since = now
    }

    /// The label currently running, if the receiver is on.
    public var current: Label? { label }

    /// Every label with its seconds, sorted by label text (deterministic).
    public var entries: [(label: String, seconds: Double)] {
        seconds.map { ($0.key.text, $0.value) }.sorted { $0.0 < $1.0 }
    }
}
