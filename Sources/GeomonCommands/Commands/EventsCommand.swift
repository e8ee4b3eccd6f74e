#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import GeomonCore
import GeomonSystem
import GeomonDaemon
import GeomonFormat
import GeomonHooks
import GeomonStore

/// `geomon events`: Lists stored events.
struct EventsCommand: GeomonCommand {
    static let spec = CommandSpec(
        "events",
        abstract: "Lists stored events",
        discussion: """
        Lists the events stored in a database, in the order they were decided: one line each
        (text) or one JSON object per line, as `replay` prints them. With --svg, draws the stored
        fixes and events as a map and timeline instead (fences from --profile; the receiver from
        the receiver log `run` and `replay` write, otherwise stated as unknown). With --commands,
        lists the commands received over MQTT instead (`publish.mqtt.commands`): when, on which
        topic, the action, whether it was accepted and what it changed or why it was refused.
        """,
        options: [
            readDatabaseOption,
            .choice("--format", ["text", "json"], "text (default) or json (one object per line)"),
            sinceOption,
            .option("--fence", "ID", "only events of this fence"),
            .option("--limit", "N", "only the last N events"),
            .option("--svg", "FILE", "draw the stored fixes and events instead", completion: .file(["svg"])),
            .option("--profile", "PROFILE", "with --svg: the profile whose fences to draw", completion: .file(["yaml", "yml"])),
            .flag("--commands", "list the commands received over MQTT instead (who changed the pushed fences, when)"),
            insecureProfileOption,
        ],
        required: ["--db"]
    )

    var db: String
    var json: Bool
    var since: UTCTime?
    var fence: String?
    var limit: Int?
    var svg: String?
    var profile: String?
    var commands: Bool
    var insecurePermissions: Bool

    init(_ arguments: ParsedArguments) throws {
        commands = arguments.flag("--commands")
        db = try arguments.required("--db")
        json = arguments.choice("--format", default: "text") == "json"
        since = try arguments.time("--since", now: WallClock.now())
        fence = arguments.value("--fence")
        limit = try arguments.int("--limit", in: 1...Int(Int32.max))
        svg = arguments.value("--svg")
        profile = arguments.value("--profile")
        insecurePermissions = arguments.flag("--insecure-permissions")
    }

    func validate() throws {
        if profile != nil, svg == nil { throw UsageError("--profile belongs to --svg") }
        if commands, svg != nil || fence != nil { throw UsageError("--commands lists commands: not with --svg or --fence") }
        // The picture draws the whole database: a filter would be silently ignored.
        if svg != nil, fence != nil || since != nil || limit != nil || json {
            throw UsageError("--svg draws every stored fix and event: not with --fence, --since, --limit or --format")
        }
        try OutputPaths.check(outputs: [("--svg", svg)], inputs: [("--db", db), ("--profile", profile)])
    }

    func run() throws -> Int32 {
        let store = try openReadOnlyStore(db)
        if let svg {
            let profile = try profile.map { try loadProfileOrExit($0, insecurePermissions: insecurePermissions) }
            let picture = try ReplayPicture.svg(store: store, profile: profile, title: "geomon events · \(store.path)")
            try writeFile(picture, to: svg)
            return 0
        }
        if commands {
            var list = try store.commandLog.all()
            if let since { list = list.filter { $0.received >= since } }
            if let limit { list = Array(list.suffix(limit)) }
            for command in list { print(Self.line(command, json: json)) }
            return 0
        }
        for stored in try store.eventLog.events(since: since, fence: fence, limit: limit) {
            print(EventEncoding.line(stored.event, json: json))
        }
        return 0
    }
}

extension EventsCommand {
    /// A stored command as `--commands` prints it.
    static func line(_ command: StoredCommand, json: Bool) -> String {
        if json {
            var o = JSONObject()
            o.add("seq", Int(command.seq))
            o.add("received", command.received.rfc3339)
            o.add("topic", command.topic)
            o.add("action", command.action)
            o.add("accepted", command.accepted)
            o.add("summary", command.summary)
            return o.text
        }
        return "\(command.received.rfc3339) command \(command.seq) \(command.action) \(command.accepted ? "accepted" : "refused"): \(command.summary) (\(command.topic))"
    }
}

/// Writes `text` to `path`, or fails with the reason (exit 1).
func writeFile(_ text: String, to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if n < 0, errno == EINTR { continue }
        guard n > 0 else { throw CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
        bytes = bytes.dropFirst(n)
    }
}
