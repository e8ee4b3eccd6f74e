import GeomonCore
import GeomonDaemon
import GeomonFormat
import GeomonStore
#if canImport(Glibc)
import Glibc
#endif

/// `geomon publish list|retry`: the MQTT outbox.
enum PublishCommand {
    static let group = CommandGroup(
        name: "publish",
        abstract: "Lists and republishes the MQTT messages of publish.mqtt",
        discussion: "See docs/publish.md for the messages, the outbox and its bound.",
        subcommands: [PublishListCommand.self, PublishRetryCommand.self]
    )
}

/// `geomon publish list`: pending messages (and with `--all` the published ones kept).
struct PublishListCommand: GeomonCommand {
    static let spec = CommandSpec(
        "publish list",
        abstract: "Prints the messages waiting for the broker's acknowledgement",
        discussion: """
        Prints the outbox, oldest first: each message's number, kind, time, topic, state and
        payload. Messages stay in the outbox until the broker acknowledged them; published
        ones are kept as long as publish.mqtt.keep allows (--all lists them too).
        """,
        options: [
            HooksCommand.dbOption,
            .flag("--all", "also the published messages still kept"),
            .option("--limit", "N", "at most the latest N messages (default 100)"),
            .choice("--format", ["text", "json"], "a table (default) or one JSON object per line"),
        ],
        required: ["--db"]
    )

    var db: String
    var all: Bool
    var limit: Int
    var json: Bool

    init(_ arguments: ParsedArguments) throws {
        db = try arguments.required("--db")
        all = arguments.flag("--all")
        limit = try arguments.int("--limit", in: 1...10_000_000) ?? 100
        json = arguments.choice("--format", default: "text") == "json"
    }

    func run() throws -> Int32 {
        let store = try HooksCommand.openQueue(path: db, writable: false)
        let rows = try store.outbox.publications(includingPublished: all, limit: limit)
        if json {
            for row in rows {
                var o = JSONObject()
                o.add("seq", Int(row.seq))
                o.add("kind", row.publication.kind.rawValue)
                o.add("time", row.publication.time.rfc3339)
                o.add("topic", row.publication.topic)
                o.add("retain", row.publication.retain)
                o.add("published", row.refused == nil ? row.publishedAt?.rfc3339 : nil)
                if let refused = row.refused {
                    o.add("refused", refused)
                    o.add("refused_at", row.publishedAt?.rfc3339)
                }
                // A `clear` is an empty message: no JSON to embed.
                o.add("payload", raw: row.publication.payload.isEmpty ? "null" : row.publication.payload)
                print(o.text)
            }
            return 0
        }
        guard !rows.isEmpty else {
            print(all ? "no messages" : "no pending messages")
            return 0
        }
        for row in rows {
            let state = row.refused.map { "refused (\($0))" } ?? row.publishedAt.map { "published \($0.rfc3339)" } ?? "pending"
            let payload = row.publication.payload
            let excerpt = payload.count > 120 ? String(payload.prefix(117)) + "..." : payload
            print("\(row.seq)  \(row.publication.kind.rawValue)  \(row.publication.time.rfc3339)  \(row.publication.topic)  \(state)  \(excerpt)")
        }
        let pending = try store.outbox.pendingPublicationCount()
        let refused = try store.outbox.refusedPublicationCount()
        print("\(pending) pending" + (refused > 0 ? ", \(refused) refused by the broker ('geomon publish retry --since TIME' sends them again)" : ""))
        return 0
    }
}

/// `geomon publish retry`: connect now, or publish again what was published since a time.
struct PublishRetryCommand: GeomonCommand {
    static let spec = CommandSpec(
        "publish retry",
        abstract: "Reconnects to the broker now, or publishes again the messages since a time",
        discussion: """
        Without --since: when a `geomon run` owns the database, asks it to skip its reconnect
        backoff and send what is pending now (SIGUSR2 to the pid in the lock file; run it as
        the daemon's user or root); otherwise prints how many messages wait for the next
        `geomon run` (or `geomon replay --publish --db`).

        With --since TIME (RFC 3339): the published messages kept since TIME become pending
        again and are published again, in their order (a consumer that lost its data gets them
        back). This writes the database: stop the daemon first.
        """,
        options: [
            HooksCommand.dbOption,
            .option("--since", "TIME", "publish again the kept messages at or after TIME (RFC 3339, e.g. 2026-05-01T08:00:00Z)"),
        ],
        required: ["--db"]
    )

    var db: String
    var since: UTCTime?

    init(_ arguments: ParsedArguments) throws {
        db = try arguments.required("--db")
        if let text = arguments.value("--since") {
            guard let time = UTCTime(rfc3339: text) else {
                throw UsageError("option '--since' must be an RFC 3339 time such as 2026-05-01T08:00:00Z (got '\(text)')")
            }
            since = time
        }
    }

    func run() throws -> Int32 {
        if let (pid, role) = InstanceLock.holderAndRole(databasePath: db) {
            // Only a daemon takes the signal (a replay would die of it).
            guard role == "run" else {
                throw CommandFailure("a geomon \(role) (pid \(pid)) holds \(db); run this once it has finished", exitCode: .unavailable)
            }
            if since != nil {
                throw CommandFailure("the running geomon (pid \(pid)) owns \(db); stop it to requeue published messages, then start it again")
            }
            guard kill(pid, SIGUSR2) == 0 else {
                throw CommandFailure("cannot ask the running geomon (pid \(pid)) to reconnect: \(String(cString: strerror(errno))); run this as its user or root")
            }
            let pending = try HooksCommand.openQueue(path: db, writable: false).outbox.pendingPublicationCount()
            print("asked the running geomon (pid \(pid)) to reconnect now; \(pending) \(pending == 1 ? "message" : "messages") pending")
            return 0
        }
        guard let since else {
            let pending = try HooksCommand.openQueue(path: db, writable: false).outbox.pendingPublicationCount()
            print("no geomon runs on \(db); \(pending) \(pending == 1 ? "message waits" : "messages wait") for the next `geomon run`")
            return 0
        }
        let count = try HooksCommand.withWritableStore(db) { try $0.outbox.requeuePublications(since: since) }
        print("\(count) published \(count == 1 ? "message is" : "messages are") pending again; the next `geomon run` publishes them")
        return 0
    }
}
