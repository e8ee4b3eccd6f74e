import FoundationEssentials
import GeomonCore
import GeomonDaemon
import GeomonFormat
import GeomonHooks
import GeomonStore
import GeomonSystem
#if canImport(Glibc)
import Glibc
#endif

/// `geomon bench hooks`: what a hook costs — spawning a process, and delivering from the store.
struct BenchHooksCommand: GeomonCommand {
    static let spec = CommandSpec(
        "bench hooks",
        abstract: "Measures hook spawning and delivery: runs per second, against a real store",
        discussion: """
        Prints one JSON line: spawn_us_p50 / _p95 (one `/bin/true` run from spawn to reaped, with
        the hook runner's pipes, pidfd and process group, one at a time), deliveries_per_s (N
        events committed to a temporary database, each with a delivery row to `/bin/true`,
        delivered by the worker 4 at a time, one at a time per fence, 16 fences), and the
        machine it ran on (cores).
        """,
        options: [
            .option("--runs", "N", "sequential spawns timed (default 300)"),
            .option("--deliveries", "N", "deliveries through the worker (default 1000)"),
        ]
    )

    var runs: Int
    var deliveries: Int

    init(_ arguments: ParsedArguments) throws {
        runs = try arguments.int("--runs", in: 1...1_000_000) ?? 300
        deliveries = try arguments.int("--deliveries", in: 1...1_000_000) ?? 1000
    }

    func run() throws -> Int32 {
        let runner = HookRunner()
        let invocation = HookInvocation(argv: ["/bin/true"], environment: ["PATH": "/usr/bin:/bin"], stdin: [], workingDirectory: "/", timeout: .seconds(10))
        var spawn: [Double] = []
        for _ in 0..<runs {
            let start = Monotonic.microseconds()
            _ = runner.run(invocation)
            spawn.append(Double(Monotonic.microseconds() - start))
        }
        spawn.sort()

        let dir = try makeTemporaryDirectory(prefix: "geomon-bench-hooks")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try EventStore(path: dir + "/bench.db")
        var batch = CommitBatch(profileName: "bench", committedAt: UTCTime(millisecondsSince1970: 0))
        let target = DeliveryTarget(hookKey: JSON.array(["/bin/true"]), argv: ["/bin/true"])
        for n in 0..<deliveries {
            let event = GeoEvent(id: "ev-\(n)", kind: .enter, fenceID: "f\(n % 16)", time: UTCTime(millisecondsSince1970: Int64(n) * 1000),
                                 coordinate: Coordinate(latitude: 46, longitude: 7), accuracyMeters: 5, rule: .recorded("bench"))
            batch.events.append((event, [target]))
        }
        _ = try store.commit(batch)
        var hooks = HookSettings()
        hooks.enter = [HookSpec(exec: ["/bin/true"])]
        let worker = DeliveryWorker(queue: store.deliveryQueue, settings: .init(profileName: "bench", profileDirectory: "/", maxConcurrent: 4),
                                    catalog: HookCatalog(settings: hooks))
        let start = Monotonic.microseconds()
        guard try worker.runUntilSettled(timeout: .seconds(600)) else { throw CommandFailure("bench hooks: the deliveries did not settle within 600 s") }
        let seconds = Double(Monotonic.microseconds() - start) / 1e6
        let delivered = try store.deliveryQueue.deliveries(status: .delivered).count
        var o = JSONObject()
        o.add("spawn_runs", runs)
        o.add("spawn_us_p50", spawn[spawn.count / 2], decimals: 0)
        o.add("spawn_us_p95", spawn[min(spawn.count - 1, spawn.count * 95 / 100)], decimals: 0)
        o.add("deliveries", delivered)
        o.add("deliveries_per_s", Double(delivered) / seconds, decimals: 1)
        o.add("cores", Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        print(o.text)
        return delivered == deliveries ? 0 : 1
    }
}
