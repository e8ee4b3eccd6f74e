public import GeomonCore
import GeomonFormat

/// An OwnTracks command (`{"_type":"cmd","action":…}`) as geomon reads it from `TOPIC/cmd`
/// (`publish.mqtt.commands`). Only what can change fences, or ask for a position, is accepted;
/// every other action is refused by name (a remote `setConfiguration` could change hooks or the
/// broker: remote code execution).
public struct OwnTracksCommand: Sendable {
    /// One waypoint of a `setWaypoints`.
    public struct Waypoint: Hashable, Sendable {
        /// Its identity, as the apps merge by it: `rid:…`, else `tst:…`, else `desc:…`.
        public var key: String
        public var fenceID: String
        public var name: String
        public var center: Coordinate
        public var radiusMeters: Double
        /// Its `tst` (epoch seconds, the OwnTracks identity the server matches), if it had one.
        public var tst: Int64? = nil
        /// A waypoint without a region (an invalid position or `rad` ≤ 0), as the apps send to
        /// remove the region with the same identity.
        public var removes: Bool
    }

    public enum Action: Sendable {
        /// The waypoints, and why others were left out (one phrase each).
        case setWaypoints([Waypoint], skipped: [String])
        case clearWaypoints
        /// Publish the current waypoints.
        case waypoints
        case reportLocation
        /// geomon's own: a circle placed where the device stands (the anchor watch), and its
        /// removal (`{"_type":"cmd","action":"placeFence","id":"anchor","radius":40}`).
        case placeFence(id: String, name: String?, radiusMeters: Double)
        case removeFence(id: String)
        /// Anything else: refused.
        case refused
    }

    public struct Failure: Error, Sendable {
        public var message: String
    }

    /// The largest payload read, and the most waypoints one command may set.
    public static let maxBytes = 64 * 1024
    public static let maxWaypoints = 500

    /// The command's `action` as written.
    public var name: String
    public var action: Action

    public static func parse(_ bytes: [UInt8]) -> Result<OwnTracksCommand, Failure> {
        guard bytes.count <= maxBytes else { return .failure(Failure(message: "\(bytes.count) bytes, more than the \(maxBytes) a command may have")) }
        let root: JSONTree.Node
        do { root = try JSONTree.parse(bytes) } catch {
            return .failure(Failure(message: "not JSON (\(error.message) at byte \(error.offset))"))
        }
        guard root.isObject else { return .failure(Failure(message: "not an OwnTracks command (\(root.kind), not an object)")) }
        guard root["_type"]?.string == "cmd" else { return .failure(Failure(message: "not an OwnTracks command (its _type is not \"cmd\")")) }
        guard let name = root["action"]?.string, !name.isEmpty else { return .failure(Failure(message: "a command without an 'action'")) }
        switch name {
        case "clearWaypoints": return .success(OwnTracksCommand(name: name, action: .clearWaypoints))
        case "waypoints": return .success(OwnTracksCommand(name: name, action: .waypoints))
        case "reportLocation": return .success(OwnTracksCommand(name: name, action: .reportLocation))
        case "setWaypoints": break
        case "placeFence", "removeFence":
            guard let id = root["id"]?.string else { return .failure(Failure(message: "\(name) without an 'id'")) }
            if let problem = FenceIDRule.problem(id) { return .failure(Failure(message: "\(name): the fence id \(problem)")) }
            if name == "removeFence" { return .success(OwnTracksCommand(name: name, action: .removeFence(id: id))) }
            let radius = root["radius"]?.number ?? 50
            guard radius.isFinite, radius > 0, radius <= geometryMaxCircleRadiusMeters else {
                return .failure(Failure(message: "placeFence: 'radius' must be metres above 0 and at most \(Int(geometryMaxCircleRadiusMeters))"))
            }
            return .success(OwnTracksCommand(name: name, action: .placeFence(id: id, name: root["name"]?.string, radiusMeters: radius)))
        default: return .success(OwnTracksCommand(name: name, action: .refused))
        }
        guard let items = waypointList(root) ?? waypointList(root["payload"]) else {
            return .failure(Failure(message: "setWaypoints without a 'waypoints' list"))
        }
        guard items.count <= maxWaypoints else {
            return .failure(Failure(message: "setWaypoints with \(items.count) waypoints, more than the \(maxWaypoints) a command may set"))
        }
        var waypoints: [Waypoint] = []
        var skipped: [String] = []
        for (n, item) in items.enumerated() {
            switch waypoint(item) {
            case .success(let waypoint): waypoints.append(waypoint)
            case .failure(let problem): skipped.append("waypoint \(n + 1): \(problem.message)")
            }
        }
        return .success(OwnTracksCommand(name: name, action: .setWaypoints(waypoints, skipped: skipped)))
    }

    /// The waypoints of an OwnTracks message: a bare list, the list under `waypoints` (a
    /// `waypoints` message, or a `cmd` whose `waypoints` is itself one, as the apps send), or
    /// a single `waypoint` (a list of one); nil when there is none.
    static func waypointList(_ node: JSONTree.Node?) -> [JSONTree.Node]? {
        guard let node else { return nil }
        if let items = node.array { return items }
        if node["_type"]?.string == "waypoint" { return [node] }
        return node["waypoints"].flatMap(waypointList)
    }

    /// Why a waypoint is not one geomon monitors: a waypoint that is no place (a follow or
    /// iBeacon region: `notAPlace`), or a wrong one.
    struct WaypointProblem: Error {
        var message: String
        var notAPlace = false
    }

    /// One waypoint, as the apps read it (`desc`, `lat`, `lon`, `rad`, `rid`, `tst`): the fence
    /// id `rid`, else `desc`; a missing `rad` is 0 (no region); checked by the fence id rule and
    /// the geometry limits. Shared by `setWaypoints` and OwnTracks files (`PlaceFiles`).
    static func waypoint(_ item: JSONTree.Node) -> Result<Waypoint, WaypointProblem> {
        guard item.isObject else { return .failure(WaypointProblem(message: "not an object (\(item.kind))")) }
        if let type = item["_type"]?.string, type != "waypoint" { return .failure(WaypointProblem(message: "_type \"\(type)\", not \"waypoint\"")) }
        guard let desc = item["desc"]?.string, !desc.trimmingWhitespace().isEmpty else {
            return .failure(WaypointProblem(message: "no 'desc' (its name)"))
        }
        if desc.hasPrefix("+follow") {
            return .failure(WaypointProblem(message: "'\(desc.clipped)' is a follow region (it moves with the device)", notAPlace: true))
        }
        if item["uuid"] != nil { return .failure(WaypointProblem(message: "'\(desc.clipped)' is an iBeacon region", notAPlace: true)) }
        let rid = item["rid"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        let tstNumber = item["tst"]?.number
        let tst = tstNumber.flatMap { $0.isFinite && abs($0) < 1e15 ? Int64($0.rounded()) : nil }
        let key = rid.map { "rid:" + $0 } ?? tstNumber.map { _ in "tst:\(tst ?? 0)" } ?? "desc:" + desc
        let fenceID = String((rid ?? desc).trimmingWhitespace())
        if let problem = FenceIDRule.problem(fenceID) { return .failure(WaypointProblem(message: "its id \(problem)")) }
        guard let lat = item["lat"]?.number, let lon = item["lon"]?.number else {
            return .failure(WaypointProblem(message: "'\(desc.clipped)' needs numbers 'lat' and 'lon'"))
        }
        // A missing (or null) `rad` is 0: no region. One that is there must be metres, 0 or more.
        var rad = 0.0
        if let radNode = item["rad"], !radNode.isNull {
            guard let number = radNode.number, number >= 0 else {
                let got = radNode.number.map(formatNumber) ?? radNode.string.map { "the string \"\($0.clipped)\"" } ?? radNode.kind
                return .failure(WaypointProblem(message: "'\(desc.clipped)': 'rad' must be a number of metres, 0 or more (got \(got))"))
            }
            rad = number
        }
        let center = Coordinate(latitude: lat, longitude: lon)
        if !center.isValid || rad <= 0 {
            return .success(Waypoint(key: key, fenceID: fenceID, name: desc, center: center, radiusMeters: rad, tst: tst, removes: true))
        }
        let problems = geometryLimitProblems(.circle(center: center, radiusMeters: rad))
        if !problems.isEmpty { return .failure(WaypointProblem(message: "'\(desc.clipped)': " + problems.map(\.text).joined(separator: "; "))) }
        return .success(Waypoint(key: key, fenceID: fenceID, name: desc, center: center, radiusMeters: rad, tst: tst, removes: false))
    }
}
