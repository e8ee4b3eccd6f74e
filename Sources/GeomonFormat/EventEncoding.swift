public import GeomonCore

/// The one encoding of an event, the same on stdout, in `geomon export` and on hook stdin:
///
///     {"id":"…","type":"enter","fence":"home","fence_name":"Home","time":"2026-…Z",
///      "lat":47.3328951,"lon":7.8210652,"accuracy_m":5.2,"rule":"enter: …"}
///
/// `fence` and `fence_name` are null for `location` events. An `approach` event adds
/// `"approach":{"band_m","distance_m","distance_min_m","direction","closing_speed_mps","eta_s","eta_min_s"}`
/// (`eta_s`/`eta_min_s` only when known). An exit adds `inside_s`; the movement events their
/// figures (`EventFigures.members`: `source`, `since`, `duration_s`, `distance_m`, `moving_s`,
/// `max_speed_mps`, `mean_speed_mps`, `start_lat`/`start_lon`, `center_lat`/`center_lon`,
/// `radius_m`). An event a fence's cooldown held back adds `"suppressed":true`; an exit the
/// fence's `events` leave out, sent only to end a reported stay for MQTT consumers,
/// `"unlisted":true`. Coordinates have 7 decimals (1 cm),
/// the accuracy one (10 cm). Hook stdin adds `profile`, `attempt`, `test` (and, for one release,
/// the old names `event` = `type` and `event_id` = `id`).
public enum EventEncoding {
    /// The event's members, for callers that add their own.
    public static func object(_ event: GeoEvent) -> JSONObject {
        var o = JSONObject()
        o.add("id", event.id)
        o.add("type", event.kind.rawValue)
        o.add("fence", event.fenceID)
        o.add("fence_name", event.fenceName)
        o.add("time", event.time.rfc3339)
        o.add("lat", event.hasPosition ? event.coordinate.latitude : nil, decimals: 7)
        o.add("lon", event.hasPosition ? event.coordinate.longitude : nil, decimals: 7)
        o.add("accuracy_m", event.accuracyMeters, decimals: 1)
        o.add("rule", event.rule.text)
        if let approach = event.approach { o.add("approach", EventRule.approachObject(approach)) }
        event.figures?.add(to: &o)
        if event.suppressed { o.add("suppressed", true) }
        if event.unlisted { o.add("unlisted", true) }
        return o
    }

    /// One JSON object on one line.
    public static func json(_ event: GeoEvent) -> String {
        object(event).text
    }

    /// `2010-04-03T11:30:00Z  enter     a  47.332895,7.821065  ±5.2 m  ID  RULE`
    public static func text(_ event: GeoEvent) -> String {
        let kind = event.kind.rawValue
        let padded = kind.count >= 8 ? kind : kind + String(repeating: " ", count: 8 - kind.count)
        return "\(event.time.rfc3339)  \(padded)  \(event.fenceID ?? "-")  "
            + (event.hasPosition ? "\(NumberText.short(event.coordinate.latitude, 6)),\(NumberText.short(event.coordinate.longitude, 6))"
                + "  ±\(NumberText.short(event.accuracyMeters, 1)) m" : "no position yet")
            + "  \(event.id)  \(event.rule.text)"
            + (event.suppressed ? "  (suppressed: cooldown)" : "")
            + (event.unlisted ? "  (unlisted: ends the stay for MQTT consumers; no hooks)" : "")
    }

    public static func line(_ event: GeoEvent, json asJSON: Bool) -> String {
        asJSON ? json(event) : text(event)
    }
}
