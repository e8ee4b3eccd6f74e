public import GeomonCore
import GeomonFormat

/// What a topic the profile no longer publishes on gets before it goes quiet (docs/publish.md,
/// "Changing the topic"): a profile edited to another `publish.mqtt.topic` is, to its consumers,
/// another device, and the old one would stay where it was last seen for ever — inside its
/// regions, its location retained on the broker (Home Assistant shows a device that never
/// leaves home).
///
/// From the messages the outbox holds for the old topic since it was last retired: a `leave`
/// on `TOPIC/event` for every region its consumers were last told the device is in (in order:
/// an enter adds a region, a leave removes it, a location's `inrids` are the whole set), at the
/// last position published there, with `geomon: {"retired": true}`; then an empty retained
/// message on `TOPIC/status`, `TOPIC/waypoints` and `TOPIC`, which deletes what the broker
/// kept. The empty message on `TOPIC` comes last and marks the topic retired.
///
/// Pure: the same messages give the same bytes.
public enum OwnTracksRetirement {
    public static func messages(retiring topic: String, history: [Publication]) -> [Publication] {
        struct Region {
            var desc: String
            var wtst: Int?
        }
        // The regions in the order entered; what the messages told consumers, in order: an
        // enter adds one, a leave removes it, a location's `inrids` are the whole set.
        var inside: [(rid: String, region: Region)] = []
        var located: (lat: Double, lon: Double, acc: Double, tid: String?)?
        var time: UTCTime?
        for message in history where message.kind != .waypoints {
            time = max(time ?? message.time, message.time)
            guard let root = try? JSONTree.parse(Array(message.payload.utf8)), root.isObject else { continue }
            if let lat = root["lat"]?.number, let lon = root["lon"]?.number, lat.isFinite, lon.isFinite {
                located = (lat, lon, root["acc"]?.number ?? 1, root["tid"]?.string)
            }
            switch message.kind {
            case .transition:
                guard let rid = root["rid"]?.string else { continue }
                inside.removeAll { $0.rid == rid }
                if root["event"]?.string == "enter" {
                    inside.append((rid, Region(desc: root["desc"]?.string ?? rid, wtst: root["wtst"]?.number.map(\.roundedClampedToInt))))
                }
            case .location:
                let ids = root["inrids"]?.array?.compactMap(\.string) ?? []
                let names = root["inregions"]?.array?.compactMap(\.string) ?? []
                inside = ids.enumerated().map { k, rid in
                    (rid, inside.first { $0.rid == rid }?.region ?? Region(desc: k < names.count ? names[k] : rid, wtst: nil))
                }
            case .waypoints, .clear:
                break
            }
        }
        var out: [Publication] = []
        let end = time ?? history.map(\.time).max() ?? UTCTime(millisecondsSince1970: 0)
        if let located {
            for (rid, region) in inside {
                var o = JSONObject()
                o.add("_type", "transition")
                o.add("acc", OwnTracks.accuracy(located.acc))
                o.add("desc", region.desc)
                o.add("event", "leave")
                var extra = JSONObject()
                extra.add("retired", true)
                o.add("geomon", extra)
                o.add("lat", located.lat, decimals: 7)
                o.add("lon", located.lon, decimals: 7)
                o.add("rid", rid)
                o.add("t", "c")
                o.add("tid", located.tid)
                o.add("tst", OwnTracks.seconds(end))
                o.add("wtst", region.wtst ?? OwnTracks.waypointTime(fenceID: rid))
                out.append(Publication(kind: .transition, topic: topic + "/event", payload: o.text, retain: false, time: end))
            }
        }
        // Cleared whether or not the outbox still holds a message of theirs (the bounds drop
        // published ones): the status (published beside the outbox), the waypoints; an empty
        // message where nothing is retained changes nothing.
        for suffix in ["/status", "/waypoints", ""] {
            out.append(Publication(kind: .clear, topic: topic + suffix, payload: "", retain: true, time: end))
        }
        return out
    }
}
