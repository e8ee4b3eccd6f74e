public import GeomonCore
import GeomonFormat

/// Text for `geomon hooks list|dead`: one block per delivery, deterministic.
public enum DeliveryReport {
    public static func render(_ deliveries: [Delivery], maxAttempts: Int? = nil) -> String {
        var out = ""
        for d in deliveries.sorted(by: { $0.id < $1.id }) {
            let attempts = maxAttempts.map { "\(d.attempt)/\($0)" } ?? "\(d.attempt)"
            var line = "#\(d.id) \(d.status.rawValue) attempt \(attempts)"
            if let next = d.nextAttemptAt, d.status == .retrying || d.status == .pending { line += " next \(next.rfc3339)" }
            out += line + "\n"
            var event = "  event \(d.event.kind.rawValue) \(d.event.id) at \(d.event.time.rfc3339)"
            if let fence = d.event.fenceID { event += " fence \(JSON.string(fence))" }
            out += event + "\n"
            out += "  hook  \(JSON.array(d.argv))\n"
            if let error = d.lastError { out += "  error \(oneLine(error))\n" }
        }
        return out
    }

    private static func oneLine(_ text: String) -> String {
        text.map { $0 == "\n" || $0 == "\r" ? " " : String($0) }.joined()
    }
}
