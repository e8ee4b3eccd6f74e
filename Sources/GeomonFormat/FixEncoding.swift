public import GeomonCore

/// A fix as JSON, the one way geomon writes one: `geomon export --format jsonl` (which replay
/// reads back), `geomon status`'s last fix, the daemon's status.
public enum FixEncoding {
    /// `{"time","lat","lon","accuracy_m"[,"speed_mps"][,"course_deg"][,"source"]}`: the
    /// source when it is not the GNSS receiver.
    public static func object(_ fix: Fix) -> JSONObject {
        var o = JSONObject()
        o.add("time", fix.time.rfc3339)
        o.add("lat", fix.coordinate.latitude, decimals: 7)
        o.add("lon", fix.coordinate.longitude, decimals: 7)
        o.add("accuracy_m", fix.horizontalAccuracyMeters, decimals: 1)
        if let s = fix.speedMetersPerSecond { o.add("speed_mps", s, decimals: 2) }
        if let c = fix.courseDegrees { o.add("course_deg", c, decimals: 1) }
        if fix.source != .gnss { o.add("source", fix.source.rawValue) }
        return o
    }

    public static func json(_ fix: Fix) -> String { object(fix).text }
}
