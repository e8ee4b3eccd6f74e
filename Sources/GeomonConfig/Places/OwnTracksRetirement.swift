public import GeomonCore
import GeomonFormat

/// What a topic's consumers were last told, from the messages the outbox holds for it (its
/// `location`s on `TOPIC` and `transition`s on `TOPIC/event`, oldest first): the regions the
/// device is in, as entered — in order, an enter adds a region, a leave removes it, a
/// location's `inrids` are the whole set — and the last position published there.
public struct OwnTracksTold: Sendable {
    public struct Region: Hashable, Sendable {
        public var id: String
        public var desc: String
        /// The `wtst` its enter carried (nil: known from a location's `inrids` only).
        public var wtst: Int?
    }

    public private(set) var inside: [Region] = []
    public private(set) var position: (lat: Double, lon: Double, acc: Double, tid: String?)?
    /// The newest time among the messages read.
    public private(set) var time: UTCTime?

    public init(history: [Publication]) {
        for message in history where message.kind == .location || message.kind == .transition {
            time = max(time ?? message.time, message.time)
            guard let root = try? JSONTree.parse(Array(message.payload.utf8)), root.isObject else { continue }
            if let lat = root["lat"]?.number, let lon = root["lon"]?.number, lat.isFinite, lon.isFinite {
                position = (lat, lon, root["acc"]?.number ?? 1, root["tid"]?.string)
            }
            if message.kind == .transition {
                guard let rid = root["rid"]?.string else { continue }
                inside.removeAll { $0.id == rid }
                if root["event"]?.string == "enter" {
                    inside.append(Region(id: rid, desc: root["desc"]?.string ?? rid, wtst: root["wtst"]?.number.map(\.roundedClampedToInt)))
                }
            } else {
                let ids = root["inrids"]?.array?.compactMap(\.string) ?? []
                let names = root["inregions"]?.array?.compactMap(\.string) ?? []
                inside = ids.enumerated().map { k, rid in
                    inside.first { $0.id == rid } ?? Region(id: rid, desc: k < names.count ? names[k] : rid, wtst: nil)
                }
            }
        }
    }
}

/// What a topic the profile no longer publishes on gets before it goes quiet (docs/publish.md,
/// "Changing the topic"): a profile edited to another `publish.mqtt.topic` is, to its consumers,
/// another device, and the old one would stay where it was last seen for ever — inside its
/// regions, its location retained on the broker (Home Assistant shows a device that never
/// leaves home).
///
/// From the messages the outbox holds for the old topic since it was last retired
/// (`OwnTracksTold`): a `leave` on `TOPIC/event` for every region its consumers were last told
/// the device is in, at the last position published there, with `geomon: {"retired": true}`;
/// then an empty retained message on `TOPIC/status`, `TOPIC/waypoints` and `TOPIC`, which
/// deletes what the broker kept. The empty message on `TOPIC` comes last and marks the topic
/// retired.
///
/// Pure: the same messages give the same bytes.
public enum OwnTracksRetirement {
    public static func messages(retiring topic: String, history: [Publication]) -> [Publication] {
        let told = OwnTracksTold(history: history)
        var out: [Publication] = []
        let end = told.time ?? history.map(\.time).max() ?? UTCTime(millisecondsSince1970: 0)
        if let position = told.position {
            for region in told.inside {
                var o = JSONObject()
                o.add("_type", "transition")
                o.add("acc", OwnTracks.accuracy(position.acc))
                o.add("desc", region.desc)
                o.add("event", "leave")
                var extra = JSONObject()
                extra.add("retired", true)
                o.add("geomon", extra)
                o.add("lat", position.lat, decimals: 7)
                o.add("lon", position.lon, decimals: 7)
                o.add("rid", region.id)
                o.add("t", "c")
                o.add("tid", position.tid)
                o.add("tst", OwnTracks.seconds(end))
                o.add("wtst", region.wtst ?? OwnTracks.waypointTime(fenceID: region.id))
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
