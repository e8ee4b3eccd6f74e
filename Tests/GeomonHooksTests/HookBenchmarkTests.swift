import Foundation
import GeomonCore
import GeomonHooks
import Testing

/// Throughput numbers (printed, never asserted). Run with
/// `GEOMON_BENCH=1 swift test --skip-build --filter HookBenchmarkTests`.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["GEOMON_BENCH"] == "1"))
struct HookBenchmarkTests {
    @Test func spawnLatencyAndWorkerThroughput() throws {
        let runner = HookRunner()
        let count = 300
        let start = ContinuousClock.now
        for _ in 0..<count {
            _ = runner.run(Hooks.invocation(["/bin/true"]))
        }
        let perSpawn = (ContinuousClock.now - start) / count
        print("bench hooks.spawn_true sequential: \(count) runs, \(perSpawn) per run")

        let queue = QueueFactory.make()
        let hook = HookSpec(exec: ["/bin/true"])
        for n in 0..<1000 {
            queue.enqueue(Hooks.event(id: "ev-\(n)", fence: "f\(n % 16)"), hooks: [hook])
        }
        var settings = HookSettings()
        settings.enter = [hook]
        let worker = DeliveryWorker(
            queue: queue, settings: DeliveryWorker.Settings(profileName: "bench", profileDirectory: "/", maxConcurrent: 4),
            catalog: HookCatalog(settings: settings), random: SplitMix64(seed: 1)
        )
        let t = ContinuousClock.now
        _ = try worker.runUntilSettled(timeout: .seconds(50))
        let elapsed = ContinuousClock.now - t
        let delivered = try queue.deliveries(status: .delivered).count
        print("bench hooks.worker_true concurrency=4: \(delivered) deliveries in \(elapsed), \(Double(delivered) / elapsed.secondsValue) per s")
    }
}
