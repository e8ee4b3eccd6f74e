public import GeomonStore
import GeomonCore
import GeomonFormat

/// The run's status as one JSON object: `geomon status --format json` (its `daemon`), and the
/// heartbeat hooks' stdin.
public enum RuntimeStatusText {
    /// - Parameters:
    ///   - running: whether the daemon runs now (decided by its instance lock when read back).
    ///   - pendingDeliveries, pendingMessages: the outboxes' counts, when known.
    public static func json(_ s: RuntimeStatus, running: Bool? = nil, pendingDeliveries: Int? = nil, pendingMessages: Int? = nil) -> String {
        var o = JSONObject()
        o.add("running", running ?? s.running)
        o.add("pid", s.pid)
        o.add("profile", s.profile)
        o.add("mode", s.mode)
        var receiver = JSONObject()
        receiver.add("state", s.receiverOn ? "on" : "off")
        receiver.add("reason", s.receiverReason)
        o.add("receiver", receiver)
        if let gnss = s.gnss { o.add(gnss.plugin, source(gnss)) }
        if let coarse = s.coarse { o.add("coarse", source(coarse)) }
        if let motion = s.motion {
            var m = JSONObject()
            m.add("plugin", motion.plugin)
            m.add("state", motion.state)
            m.add("since", motion.since?.rfc3339)
            o.add("motion", m)
        }
        if let planning = s.planning {
            var p = JSONObject()
            p.add("activity", planning.activity)
            p.add("from", planning.from)
            p.add("bounds", planning.bounds)
            p.add("widened", planning.widened)
            p.add("violations", planning.violations)
            p.add("ttff_hot_s", planning.ttffHotSeconds, decimals: 3)
            p.add("ttff_measured_s", planning.ttffMeasuredSeconds, decimals: 3)
            p.add("ttff_samples", planning.ttffSamples)
            o.add("planning", p)
        }
        if let fix = s.lastFix { o.add("last_fix", FixEncoding.object(fix)) }
        o.add("inside", s.inside)
        if let pendingDeliveries { o.add("pending_deliveries", pendingDeliveries) }
        if let mqtt = s.mqtt {
            var m = JSONObject()
            m.add("broker", mqtt.broker)
            m.add("topic", mqtt.topic)
            m.add("state", mqtt.state)
            if let pendingMessages { m.add("pending", pendingMessages) }
            m.add("published", mqtt.published)
            o.add("mqtt", m)
        }
        o.add("uptime_s", s.uptimeSeconds)
        o.add("loop_wakeups", s.loopWakeups)
        o.add("hooks_running", s.hooksRunning)
        o.add("updated", s.updated.rfc3339)
        return o.text
    }

    private static func source(_ source: RuntimeStatus.Source) -> JSONObject {
        var o = JSONObject()
        o.add("plugin", source.plugin)
        o.add("endpoint", source.endpoint)
        o.add("state", source.state)
        if let accuracy = source.accuracy { o.add("accuracy", accuracy) }
        if let malformed = source.malformedLines { o.add("malformed_lines", malformed) }
        if let power = source.power {
            var p = JSONObject()
            p.add("method", power.method)
            p.add("state", power.state)
            p.add("measured_on_s", power.measuredOnSeconds, decimals: 1)
            o.add("power", p)
        }
        return o
    }
}
