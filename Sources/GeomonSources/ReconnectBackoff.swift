/// Capped exponential backoff for reconnecting to gpsd (or restarting anything). Pure: it
/// says how long to wait; the caller's loop does the waiting, so nothing here sleeps.
public struct ReconnectBackoff: Sendable, Equatable {
    /// The first delay after a failure (under a second, so a gpsd restart is barely noticed).
    public var initial: Duration
    /// The longest delay.
    public var cap: Duration
    /// Failures since the last success.
    public private(set) var failures = 0

    public init(initial: Duration = .milliseconds(250), cap: Duration = .seconds(4)) {
        self.initial = initial
        self.cap = cap
    }

    /// Records a failure and returns how long to wait before the next attempt:
    /// initial, 2×, 4×, … up to `cap`.
    public mutating func failed() -> Duration {
        let exponent = min(failures, 30)
        failures += 1
        let delay = initial * (1 << exponent)
        return delay < cap ? delay : cap
    }

    /// Records a failure at `now` and returns the instant of the next attempt.
    public mutating func nextAttempt<Instant: InstantProtocol>(after now: Instant) -> Instant where Instant.Duration == Duration {
        now.advanced(by: failed())
    }

    /// Records a success: the next failure starts again at `initial`.
    public mutating func succeeded() {
        failures = 0
    }
}
