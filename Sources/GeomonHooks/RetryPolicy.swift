public import GeomonCore

/// What to do after a failed attempt.
public enum RetryDecision: Hashable, Sendable {
    case retry(at: UTCTime, delay: Duration)
    case deadLetter
}

/// Capped exponential backoff with "equal jitter". Pure: the randomness is passed in.
///
/// After failed attempt `n` (1-based) of `attempts`:
/// `base = min(max_backoff, backoff × 2^(n−1))`, `delay = base/2 + u × base/2` with `u ∈ [0, 1)`;
/// after attempt `attempts` the delivery is dead-lettered.
public enum RetryPolicy {
    public static func delay(afterAttempt attempt: Int, settings: RetrySettings, jitterUnit: Double) -> Duration {
        let baseMs = max(0, settings.backoff.wholeMilliseconds)
        let capMs = max(0, settings.maxBackoff.wholeMilliseconds)
        var exponentialMs = baseMs
        var step = 1
        while step < attempt && exponentialMs < capMs {
            exponentialMs = exponentialMs > Int64.max / 2 ? Int64.max : exponentialMs * 2
            step += 1
        }
        let cappedMs = min(exponentialMs, capMs)
        let unit = jitterUnit.isFinite ? min(max(jitterUnit, 0), 1) : 0
        let half = Double(cappedMs) / 2
        return .milliseconds(Int64((half + unit * half).rounded(.down)))
    }

    public static func decide(afterAttempt attempt: Int, settings: RetrySettings, now: UTCTime, jitterUnit: Double) -> RetryDecision {
        if attempt >= settings.attempts { return .deadLetter }
        let wait = delay(afterAttempt: attempt, settings: settings, jitterUnit: jitterUnit)
        return .retry(at: now + wait, delay: wait)
    }
}
