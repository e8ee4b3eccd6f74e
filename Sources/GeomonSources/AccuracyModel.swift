/// How geomon's sources turn receiver quality figures into `Fix.horizontalAccuracyMeters`.
///
/// Every source produces the same kind of number: a horizontal radius of roughly 95 %
/// confidence, the quantity gpsd reports as `eph`. The NMEA reader uses gpsd 3.22's own error
/// model (HDOP × a user-equivalent range error of 19 m, or 4.75 m with differential
/// corrections), so a replayed NMEA log and the same log served live through gpsd give the same
/// accuracy and therefore the same decisions. See docs/sources.md.
public enum AccuracyModel {
    /// UERE for an autonomous fix, metres (gpsd's `P_UERE_NO_DGPS`, 95 % confidence).
    public static let autonomousUEREMeters = 19.0
    /// UERE for a differential or RTK fix, metres (gpsd's `P_UERE_WITH_DGPS`).
    public static let differentialUEREMeters = 4.75
    /// Used when a source gives no quality figure at all (no HDOP, no GST, no eph).
    /// About HDOP 1.5 × 19 m: a typical consumer fix, neither optimistic nor hopeless.
    public static let unknownAccuracyMeters = 30.0

    /// Accuracy from horizontal dilution of precision.
    public static func fromHDOP(_ hdop: Double, differential: Bool) -> Double {
        hdop * (differential ? differentialUEREMeters : autonomousUEREMeters)
    }

    /// Accuracy from NMEA GST 1-sigma latitude/longitude errors: 2DRMS, about 95 %.
    public static func fromGST(latitudeSigmaMeters: Double, longitudeSigmaMeters: Double) -> Double {
        2 * (latitudeSigmaMeters * latitudeSigmaMeters + longitudeSigmaMeters * longitudeSigmaMeters).squareRoot()
    }
}
