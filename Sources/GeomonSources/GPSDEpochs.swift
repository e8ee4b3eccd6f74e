public import GeomonCore

/// gpsd's epochs as fixes, a pure state machine: gpsd reports an epoch several times, often
/// first without its accuracy (the TPV before the GST/SKY that carries `eph`). A report with
/// the accuracy is a fix at once; one without is held, and given as it is when the next epoch
/// starts or when the caller's epoch budget passes (`flush`). Each fix time is given once.
public struct GPSDEpochs: Sendable, Equatable {
    /// The held fix, waiting for its epoch's accuracy.
    public private(set) var pending: Fix?
    private var lastTimeMs: Int64?

    public init() {}

    /// A report's accuracy (m): `eph`, else max(`epx`, `epy`); nil when gpsd gave none (NaN,
    /// or not positive: gpsd's "unknown"). `geomon run` (libgps) and replay of a gpsd log read
    /// it alike.
    public static func accuracy(eph: Double?, epx: Double?, epy: Double?) -> Double? {
        if let eph, eph.isFinite, eph > 0 { return eph }
        if let epx, let epy, epx.isFinite, epy.isFinite, max(epx, epy) > 0 { return max(epx, epy) }
        return nil
    }

    /// A report of `fix`; `accuracyKnown` when gpsd gave its accuracy. Returns the fixes to
    /// hand on, in order.
    public mutating func reported(_ fix: Fix, accuracyKnown: Bool) -> [Fix] {
        let ms = fix.time.millisecondsSince1970
        guard ms != lastTimeMs else { return [] }
        var out: [Fix] = []
        if let held = pending, held.time != fix.time {
            out.append(held)
            lastTimeMs = held.time.millisecondsSince1970
            pending = nil
        }
        if accuracyKnown {
            pending = nil
            lastTimeMs = ms
            out.append(fix)
        } else if pending == nil {
            pending = fix
        }
        return out
    }

    /// Gives up waiting for the held fix's accuracy (the budget passed, or the connection
    /// ended): it is handed on as it is.
    public mutating func flush() -> [Fix] {
        guard let held = pending else { return [] }
        pending = nil
        lastTimeMs = held.time.millisecondsSince1970
        return [held]
    }

    /// A new connection: nothing is remembered.
    public mutating func reset() {
        pending = nil
        lastTimeMs = nil
    }
}
