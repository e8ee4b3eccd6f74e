/// The checks every source applies to a reported speed and course, so that NMEA, GPX, JSON
/// lines, gpsd's JSON, libgps and GeoClue agree on what a usable value is. A value that fails is
/// dropped (unknown, nil) and the fix is kept: the power policy then assumes the profile's
/// `max_speed` in any direction, the safe side.
public enum ReportedMotion {
    /// The fastest speed taken as a measurement, m/s: above any airliner (about 250 m/s at
    /// cruise) and any jet (the SR-71 flew at about 1000 m/s), and above the 1000 knots
    /// (515 m/s) beyond which civilian receivers stop reporting (the COCOM export limit).
    /// More is a corrupt field: a knots value of 99999999999999 would be 5·10¹³ m/s.
    public static let maxSpeedMetersPerSecond = 2000.0

    /// `metersPerSecond` when it is a possible speed: finite, ≥ 0 and at most
    /// `maxSpeedMetersPerSecond`; nil otherwise.
    public static func speed(_ metersPerSecond: Double) -> Double? {
        guard metersPerSecond.isFinite, metersPerSecond >= 0, metersPerSecond <= maxSpeedMetersPerSecond else { return nil }
        return metersPerSecond
    }

    /// `degrees` (clockwise from true north) when it is a possible course: finite and within
    /// 0…360, with 360 given as 0; nil otherwise. A course outside that range is a corrupt
    /// field, not an angle to wrap.
    public static func course(_ degrees: Double) -> Double? {
        guard degrees.isFinite, degrees >= 0, degrees <= 360 else { return nil }
        return degrees == 360 ? 0 : degrees
    }
}
