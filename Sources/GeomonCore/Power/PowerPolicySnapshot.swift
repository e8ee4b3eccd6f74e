/// Everything `PowerPolicy` remembers, as plain values, so the shell can persist it (the store's
/// key-value table) and restore the policy after a restart with `PowerPolicy(configuration:restoring:)`.
public struct PowerPolicySnapshot: Hashable, Sendable {
    public enum Phase: String, Hashable, Sendable {
        case idle
        case off
        case on
    }

    public var phase: Phase
    /// When off: the scheduled wake, if any, and why the receiver went off.
    public var wakeAt: UTCTime?
    public var offReason: PowerReason.Kind?
    /// When on: since when, and the base of the fix timeout (last fix or switch-on).
    public var onSince: UTCTime?
    public var timeoutBase: UTCTime?
    public var coarseOn: Bool
    public var lastGNSSOffAt: UTCTime?
    public var lastAcceptedFix: Fix?
    public var heldJumpFix: Fix?
    public var stationaryAnchor: Coordinate?
    public var stationarySince: UTCTime?
    public var stationaryCheckInterval: Duration?
    public var fixTimeoutRetry: Duration?
    /// The current listen is a short one (`retry_fix_timeout`).
    public var shortListen: Bool
    /// No boundary reachable before this time (from the last fix slept on).
    public var safeUntil: UTCTime?

    public init(
        phase: Phase,
        wakeAt: UTCTime? = nil,
        offReason: PowerReason.Kind? = nil,
        onSince: UTCTime? = nil,
        timeoutBase: UTCTime? = nil,
        coarseOn: Bool = false,
        lastGNSSOffAt: UTCTime? = nil,
        lastAcceptedFix: Fix? = nil,
        heldJumpFix: Fix? = nil,
        stationaryAnchor: Coordinate? = nil,
        stationarySince: UTCTime? = nil,
        stationaryCheckInterval: Duration? = nil,
        fixTimeoutRetry: Duration? = nil,
        shortListen: Bool = false,
        safeUntil: UTCTime? = nil
    ) {
        self.safeUntil = safeUntil
        self.shortListen = shortListen
        self.fixTimeoutRetry = fixTimeoutRetry
        self.phase = phase
        self.wakeAt = wakeAt
        self.offReason = offReason
        self.onSince = onSince
        self.timeoutBase = timeoutBase
        self.coarseOn = coarseOn
        self.lastGNSSOffAt = lastGNSSOffAt
        self.lastAcceptedFix = lastAcceptedFix
        self.heldJumpFix = heldJumpFix
        self.stationaryAnchor = stationaryAnchor
        self.stationarySince = stationarySince
        self.stationaryCheckInterval = stationaryCheckInterval
    }
}
