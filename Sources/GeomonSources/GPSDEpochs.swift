public import GeomonCore

/// gpsd's epochs as fixes, a pure state machine. gpsd reports an epoch several times as the
/// receiver's sentences come in: often first without its accuracy (the TPV before the GST/SKY
/// that carries `eph`), or with a speed gpsd computed from the positions and no course (before
/// the RMC that carries the receiver's own). An epoch's reports are merged: the last position,
/// the first accuracy given (the one that completed an epoch before its reports were merged;
/// replay of the same log as NMEA agrees), the last speed and course given. A report with an accuracy and the receiver's velocity (a course, or
/// a speed of zero: at rest a receiver leaves its course empty) completes the epoch and is a
/// fix at once; until then the merged report is held, and given as it is when the next epoch
/// starts or when the caller's epoch budget passes (`flush`). Each fix time is given once.
public struct GPSDEpochs: Sendable, Equatable {
    /// The held epoch, its reports merged so far.
    public private(set) var pending: Fix?
    /// Whether a report of the held epoch gave its accuracy.
    private var pendingAccuracyKnown = false
    /// The device the held epoch's reports came from (gpsd's TPV `device`), if named: another
    /// receiver's report of the same instant is not merged into it.
    private var pendingDevice: String?
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

    /// A report of `fix` from `device` (gpsd's TPV `device`, if named); `accuracyKnown` when
    /// gpsd gave its accuracy. Returns the fixes to hand on, in order.
    public mutating func reported(_ fix: Fix, accuracyKnown: Bool, device: String? = nil) -> [Fix] {
        let ms = fix.time.millisecondsSince1970
        guard ms != lastTimeMs else { return [] }
        var out: [Fix] = []
        if let held = pending, held.time != fix.time {
            out.append(held)
            lastTimeMs = held.time.millisecondsSince1970
            pending = nil
            pendingAccuracyKnown = false
            pendingDevice = nil
        }
        // Two receivers on one gpsd report the same GPS second: the first to report keeps it.
        if pending != nil, let device, let held = pendingDevice, device != held { return out }
        var merged = fix
        if let held = pending {
            if pendingAccuracyKnown || !accuracyKnown { merged.horizontalAccuracyMeters = held.horizontalAccuracyMeters }
            if merged.speedMetersPerSecond == nil { merged.speedMetersPerSecond = held.speedMetersPerSecond }
            if merged.courseDegrees == nil { merged.courseDegrees = held.courseDegrees }
        }
        let known = accuracyKnown || pendingAccuracyKnown
        // The receiver's velocity: a course, or a speed of zero (a receiver at rest leaves its
        // course empty).
        if known, merged.courseDegrees != nil || merged.speedMetersPerSecond == 0 {
            pending = nil
            pendingAccuracyKnown = false
            pendingDevice = nil
            lastTimeMs = ms
            out.append(merged)
        } else {
            pending = merged
            pendingAccuracyKnown = known
            pendingDevice = pendingDevice ?? device
        }
        return out
    }

    /// Gives up waiting for the rest of the held epoch (the budget passed, or the connection
    /// ended): it is handed on as merged so far.
    public mutating func flush() -> [Fix] {
        guard let held = pending else { return [] }
        pending = nil
        pendingAccuracyKnown = false
        pendingDevice = nil
        lastTimeMs = held.time.millisecondsSince1970
        return [held]
    }

    /// A new connection: nothing is remembered.
    public mutating func reset() {
        pending = nil
        pendingAccuracyKnown = false
        pendingDevice = nil
        lastTimeMs = nil
    }
}
