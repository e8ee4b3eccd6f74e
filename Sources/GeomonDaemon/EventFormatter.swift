public import GeomonCore
import GeomonStore

/// Renders events for stdout: one JSON object or one text line per event, deterministic.
public enum EventFormatter {
    /// `{"id":..,"type":..,"fence":..,"time":..,"lat":..,"lon":..,"accuracy_m":..,"fence_name":..,"rule":..}`
    public static func json(_ event: GeoEvent) -> String {
        var out = "{\"id\":\(JSONText.string(event.id)),\"type\":\(JSONText.string(event.kind.rawValue))"
        out += ",\"fence\":" + (event.fenceID.map(JSONText.string) ?? "null")
        out += ",\"time\":\(JSONText.string(event.time.rfc3339))"
        out += ",\"lat\":\(JSONText.rounded(event.coordinate.latitude, decimals: 7)),\"lon\":\(JSONText.rounded(event.coordinate.longitude, decimals: 7))"
        out += ",\"accuracy_m\":\(JSONText.rounded(event.accuracyMeters, decimals: 1))"
        if let name = event.fenceName { out += ",\"fence_name\":\(JSONText.string(name))" }
        out += ",\"rule\":\(JSONText.string(event.rule))}"
        return out
    }

    /// `2010-04-03T11:30:00Z  enter     a  47.332895,7.821065  ±5 m  id  rule`
    public static func text(_ event: GeoEvent) -> String {
        let kind = event.kind.rawValue.padding(to: 8)
        let fence = (event.fenceID ?? "-")
        return "\(event.time.rfc3339)  \(kind)  \(fence)  \(JSONText.rounded(event.coordinate.latitude, decimals: 6)),\(JSONText.rounded(event.coordinate.longitude, decimals: 6))"
            + "  ±\(JSONText.rounded(event.accuracyMeters, decimals: 1)) m  \(event.id)  \(event.rule)"
    }

    public static func line(_ event: GeoEvent, json asJSON: Bool) -> String {
        asJSON ? json(event) : text(event)
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
