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

/// Time in each mode (`modes:`) and the receiver's on-time in it, for the replay report: the
/// mode and the receiver switch at the instants the machine said, and each interval goes to the
/// mode in effect.
public struct ModeLedger: Hashable, Sendable {
    /// Seconds in each mode, by name.
    public private(set) var seconds: [String: Double] = [:]
    /// Seconds the receiver was on (acquiring or tracking) in each mode.
    public private(set) var onSeconds: [String: Double] = [:]
    /// The modes in the order they were first in effect.
    public private(set) var order: [String] = []
    /// Changes of mode.
    public private(set) var switches = 0
    private var mode: String
    private var since: UTCTime?
    private var on = false

    public init(mode: String = ModeRule.fallbackName) {
        self.mode = mode
    }

    /// The mode in effect at the start (a resumed database's).
    public mutating func start(mode: String) {
        guard since == nil else { return }
        self.mode = mode
    }

    public mutating func receiver(on: Bool, at now: UTCTime) {
        close(at: now)
        self.on = on
    }

    public mutating func mode(_ name: String, at now: UTCTime) {
        close(at: now)
        if name != mode { switches += 1 }
        mode = name
    }

    public mutating func finish(at end: UTCTime) {
        close(at: end)
    }

    private mutating func close(at now: UTCTime) {
        defer { since = max(since ?? now, now) }
        if !order.contains(mode) { order.append(mode) }
        guard let since, now > since else { return }
        let s = (now - since).secondsValue
        seconds[mode, default: 0] += s
        if on { onSeconds[mode, default: 0] += s }
    }

    /// Each mode that was in effect for a while, with its time and on-time, in the order
    /// first in effect (a mode left at the instant it began is not listed).
    public var entries: [(mode: String, seconds: Double, onSeconds: Double)] {
        order.compactMap { mode in
            let s = seconds[mode] ?? 0
            return s > 0 ? (mode, s, onSeconds[mode] ?? 0) : nil
        }
    }
}
