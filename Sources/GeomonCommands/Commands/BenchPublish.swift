import FoundationEssentials
import GeomonCore
import GeomonDaemon
import GeomonFormat
import GeomonHooks
import GeomonPublish
import GeomonStore
import GeomonSystem
#if canImport(Glibc)
import Glibc
#endif

/// `geomon bench publish`: the MQTT publisher against a running broker.
struct BenchPublishCommand: GeomonCommand {
    static let spec = CommandSpec(
        "bench publish",
        abstract: "Measures the MQTT publisher against a broker: messages per second, latency, store cost",
        discussion: """
        Uses a temporary database and the broker at --host/--port (scripts/bench-publish.sh
        starts a private mosquitto). Prints one JSON line: backlog_messages_per_s (N messages
        committed at once, as after an outage, until the broker acknowledged all), each_messages_per_s
        (one message per transaction, as events are, as fast as acknowledgements come),
        latency_us_p50 / _p95 / _max (from the start of a one-message commit to its PUBACK, one
        message at a time), store_insert_us (wall µs per message written, one per transaction),
        store_insert_batched_us (per message, 4,096 per transaction: locations with a fix batch),
        store_mark_us (per message marked published, 16 per transaction: a window of PUBACKs).
        """,
        options: [
            .option("--host", "HOST", "the broker (default 127.0.0.1)"),
            .option("--port", "PORT", "its port (default 1883)"),
            .option("--username", "USER", "the login"),
            .option("--password-file", "FILE", "a file holding the password", completion: .file([])),
            .option("--messages", "N", "messages of the backlog and throughput runs (default 10000)"),
            .option("--latency-messages", "M", "messages sent one at a time for the latency (default 1000)"),
            .option("--qos", "Q", "0, 1 (default) or 2"),
        ]
    )

    var settings: MQTTSettings
    var messages: Int
    var latencyMessages: Int

    init(_ arguments: ParsedArguments) throws {
        settings = MQTTSettings(host: arguments.value("--host") ?? "127.0.0.1", topic: "geomon-bench/\(getpid())")
        settings.port = try arguments.int("--port", in: 1...65535) ?? 1883
        settings.username = arguments.value("--username")
        if let file = arguments.value("--password-file") {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw CommandFailure("cannot read '\(file)'", exitCode: .noInput) }
            settings.password = String(text.prefix { $0 != "\n" && $0 != "\r" })
        }
        settings.qos = try arguments.int("--qos", in: 0...2) ?? 1
        messages = try arguments.int("--messages", in: 1...10_000_000) ?? 10_000
        latencyMessages = try arguments.int("--latency-messages", in: 1...10_000_000) ?? 1000
    }

    static func publication(_ i: Int, topic: String) -> Publication {
        let payload = #"{"_type":"transition","acc":8,"desc":"Bench fence","event":"enter","lat":46.3142217,"lon":6.9410083,"rid":"bench","t":"c","tid":"bn","tst":\#(1_700_000_000 + i),"wtst":1315051295}"#
        return Publication(kind: .transition, topic: topic + "/event", payload: payload, retain: false, time: UTCTime(millisecondsSince1970: Int64(1_700_000_000_000 + i)))
    }

    func run() throws -> Int32 {
        let dir = try makeTemporaryDirectory(prefix: "geomon-bench-publish")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try EventStore(path: dir + "/bench.db")
        let publisher = MQTTPublisher(settings: .init(settings: settings, profile: "bench", statusTopic: settings.topic + "/status"), outbox: store.outbox)
        var failure: String?
        publisher.onReport = { report in
            if case let .unreachable(reason, _) = report { failure = reason }
        }
        let now = MQTTPublisher.systemNow
        /// Steps the publisher until `done` or 30 s without progress.
        func pump(until done: () -> Bool) throws {
            var last = publisher.publishedCount
            var lastProgress = Monotonic.microseconds()
            while !done() {
                if let failure { throw CommandFailure("the broker \(settings.host):\(settings.effectivePort) is unavailable: \(failure)", exitCode: .unavailable) }
                if publisher.publishedCount != last {
                    last = publisher.publishedCount
                    lastProgress = Monotonic.microseconds()
                } else if Monotonic.microseconds() - lastProgress > 30_000_000 {
                    throw CommandFailure("no acknowledgement from the broker for 30 s", exitCode: .unavailable)
                }
                publisher.pollAndStep(timeoutMilliseconds: 100)
            }
        }
        func commit(_ publications: [Publication]) throws {
            var batch = CommitBatch(profileName: "bench", committedAt: WallClock.now())
            batch.publications = publications
            _ = try store.commit(batch)
            publisher.poke()
        }
        try pump { publisher.state == .connected }

        // Latency: one message at a time, commit to PUBACK.
        var latencies: [Int64] = []
        for i in 0..<latencyMessages {
            let target = publisher.publishedCount + 1
            let start = Monotonic.microseconds()
            try commit([Self.publication(i, topic: settings.topic)])
            try pump { publisher.publishedCount >= target }
            latencies.append(Monotonic.microseconds() - start)
        }
        latencies.sort()
        func percentile(_ p: Double) -> Int64 { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }

        // One message per transaction, as fast as acknowledgements come.
        var target = publisher.publishedCount + messages
        var start = Monotonic.microseconds()
        for i in 0..<messages {
            try commit([Self.publication(i, topic: settings.topic)])
            publisher.pollAndStep(timeoutMilliseconds: 0)
        }
        try pump { publisher.publishedCount >= target }
        let each = Double(messages) / (Double(Monotonic.microseconds() - start) / 1e6)

        // A backlog: everything committed at once, then sent.
        try commit((0..<messages).map { Self.publication($0, topic: settings.topic) })
        target = publisher.publishedCount + messages
        start = Monotonic.microseconds()
        try pump { publisher.publishedCount >= target }
        let backlog = Double(messages) / (Double(Monotonic.microseconds() - start) / 1e6)
        publisher.close(now: now())

        // The store alone: write and mark, no broker.
        let storeOnly = try EventStore(path: dir + "/store.db")
        let n = min(messages, 5000)
        start = Monotonic.microseconds()
        for i in 0..<n {
            var batch = CommitBatch(profileName: "bench", committedAt: WallClock.now())
            batch.publications = [Self.publication(i, topic: "s")]
            _ = try storeOnly.commit(batch)
        }
        let insertEach = Double(Monotonic.microseconds() - start) / Double(n)
        let batched = max(n, 4096)
        start = Monotonic.microseconds()
        var batch = CommitBatch(profileName: "bench", committedAt: WallClock.now())
        batch.publications = (0..<batched).map { Self.publication($0, topic: "s") }
        _ = try storeOnly.commit(batch)
        let insertBatched = Double(Monotonic.microseconds() - start) / Double(batched)
        let rows = try storeOnly.outbox.pendingPublications(after: 0, limit: n + batched).map(\.seq)
        start = Monotonic.microseconds()
        var index = 0
        while index < rows.count {
            try storeOnly.outbox.markPublished(Array(rows[index..<min(rows.count, index + 16)]), at: WallClock.now())
            index += 16
        }
        let mark = Double(Monotonic.microseconds() - start) / Double(rows.count)

        var o = JSONObject()
        o.add("broker", "\(settings.host):\(settings.effectivePort)")
        o.add("qos", settings.qos)
        o.add("messages", messages)
        o.add("backlog_messages_per_s", Int(backlog.rounded()))
        o.add("each_messages_per_s", Int(each.rounded()))
        o.add("latency_messages", latencies.count)
        o.add("latency_us_p50", Int(percentile(0.50)))
        o.add("latency_us_p95", Int(percentile(0.95)))
        o.add("latency_us_max", Int(latencies.last ?? 0))
        o.add("store_insert_us", insertEach, decimals: 1)
        o.add("store_insert_batched_us", insertBatched, decimals: 2)
        o.add("store_mark_us", mark, decimals: 2)
        print(o.text)
        return 0
    }
}
