import GeomonCore
import GeomonHooks
import Testing

/// The `DeliveryQueue` contract, as the worker relies on it. Runs against `QueueFactory.make()`
/// (the in-memory queue now; the SQLite store after the merge).
struct DeliveryQueueContractTests {
    let t0 = UTCTime(millisecondsSince1970: 1_714_564_800_000)
    let hook = HookSpec(exec: ["./h.sh"])
    let other = HookSpec(exec: ["./other.sh"])

    func event(_ n: Int, fence: String? = "a") -> GeoEvent {
        Hooks.event(id: "ev-\(n)", fence: fence, ms: t0.millisecondsSince1970 + Int64(n))
    }

    @Test func dueReturnsOnlyTheEarliestOpenDeliveryPerHookAndFence() throws {
        let q = QueueFactory.make()
        let a1 = q.enqueue(event(1), hooks: [hook, other])
        let b1 = q.enqueue(event(2, fence: "b"), hooks: [hook])
        q.enqueue(event(3), hooks: [hook, other])
        let due = try q.dueDeliveries(now: t0, limit: 100)
        #expect(due.map(\.id) == [a1[0], a1[1], b1[0]])
        #expect(due[0].event == event(1))
        #expect(due[0].argv == ["./h.sh"] && due[0].hookKey == HookCatalog.key(for: hook))
        #expect(due[0].status == .pending && due[0].attempt == 0)
        #expect(try q.dueDeliveries(now: t0, limit: 2).count == 2)
    }

    @Test func runningOrFutureRetryBlocksTheKeyAndTerminalStatesUnblockIt() throws {
        let q = QueueFactory.make()
        let first = q.enqueue(event(1), hooks: [hook])[0]
        let second = q.enqueue(event(2), hooks: [hook])[0]
        try q.markRunning(id: first, attempt: 1)
        #expect(try q.dueDeliveries(now: t0, limit: 10).isEmpty)
        try q.markRetry(id: first, nextAttemptAt: t0 + .seconds(10), error: "exit status 1")
        #expect(try q.dueDeliveries(now: t0 + .seconds(9), limit: 10).isEmpty)
        let due = try q.dueDeliveries(now: t0 + .seconds(10), limit: 10)
        #expect(due.map(\.id) == [first])
        #expect(due[0].status == .retrying && due[0].attempt == 1 && due[0].lastError == "exit status 1")
        try q.markRunning(id: first, attempt: 2)
        try q.markDead(id: first, error: "attempt 2/2: exit status 1")
        #expect(try q.dueDeliveries(now: t0, limit: 10).map(\.id) == [second])
        try q.markRunning(id: second, attempt: 1)
        try q.markDelivered(id: second)
        #expect(try q.dueDeliveries(now: t0 + .seconds(3600), limit: 10).isEmpty)
        #expect(try q.deliveries(status: .delivered).map(\.id) == [second])
        #expect(try q.deliveries(status: .dead).map(\.lastError) == ["attempt 2/2: exit status 1"])
    }

    @Test func requeueDeadStartsOverAndRecoverInterruptedRetriesNow() throws {
        let q = QueueFactory.make()
        let ids = q.enqueue(event(1), hooks: [hook, other])
        try q.markRunning(id: ids[0], attempt: 3)
        try q.markDead(id: ids[0], error: "boom")
        try q.markRunning(id: ids[1], attempt: 2)
        #expect(try q.requeueDead() == 1)
        let requeued = try #require(q.row(ids[0]))
        #expect(requeued.status == .pending && requeued.attempt == 0)
        try q.recoverInterrupted(attempts: 3)
        let recovered = try #require(q.row(ids[1]))
        #expect(recovered.status == .retrying && recovered.attempt == 2)
        #expect(try q.dueDeliveries(now: t0, limit: 10).map(\.id) == ids)
        #expect(try q.deliveries(status: .running).isEmpty)
    }

    /// A crash during a row's last attempt dead-letters it, saying so; one during an earlier
    /// attempt leaves it due again. `requeueDead` starts it over.
    @Test func recoverInterruptedDeadLettersARowWhoseLastAttemptACrashCut() throws {
        let q = QueueFactory.make()
        let ids = q.enqueue(event(1), hooks: [hook, other])
        try q.markRunning(id: ids[0], attempt: 3)
        try q.markRunning(id: ids[1], attempt: 2)
        try q.recoverInterrupted(attempts: 3)
        let last = try #require(q.row(ids[0]))
        #expect(last.status == .dead && last.attempt == 3)
        #expect(last.lastError?.hasPrefix("attempt 3/3: geomon stopped during it without recording its end") == true, "\(last)")
        let earlier = try #require(q.row(ids[1]))
        #expect(earlier.status == .retrying && earlier.attempt == 2 && earlier.lastError == nil)
        #expect(try q.requeueDead() == 1)
        #expect(try q.dueDeliveries(now: t0, limit: 10).map(\.id) == ids)
    }

    /// An attempt a stop cut short is due again and not counted; a row no longer running that
    /// attempt (recovered, finished, or on another attempt) is left alone.
    @Test func markInterruptedUncountsOnlyTheAttemptThatRuns() throws {
        let q = QueueFactory.make()
        let ids = q.enqueue(event(1), hooks: [hook, other])
        try q.markRunning(id: ids[0], attempt: 3)
        try q.markInterrupted(id: ids[0], attempt: 3, attempts: 5, note: "attempt 3/5: interrupted by a stop")
        let stopped = try #require(q.row(ids[0]))
        #expect(stopped.status == .retrying && stopped.attempt == 2 && stopped.lastError == "attempt 3/5: interrupted by a stop")
        // Cut short again at once: this time it counts (a hook that stops geomon every time).
        try q.markRunning(id: ids[0], attempt: 3)
        try q.markInterrupted(id: ids[0], attempt: 3, attempts: 5, note: "attempt 3/5: interrupted by a stop")
        #expect(q.row(ids[0])?.attempt == 3 && q.row(ids[0])?.status == .retrying)
        // The last attempt cut short twice in a row: dead-lettered, not run past its limit.
        try q.markRunning(id: ids[0], attempt: 5)
        try q.markInterrupted(id: ids[0], attempt: 5, attempts: 5, note: "attempt 5/5: interrupted by a stop")
        #expect(q.row(ids[0])?.status == .retrying && q.row(ids[0])?.attempt == 4)
        try q.markRunning(id: ids[0], attempt: 5)
        try q.markInterrupted(id: ids[0], attempt: 5, attempts: 5, note: "attempt 5/5: interrupted by a stop")
        #expect(q.row(ids[0])?.status == .dead && q.row(ids[0])?.attempt == 5)
        #expect(try q.requeueDead() == 1)
        try q.markRunning(id: ids[1], attempt: 2)
        try q.markInterrupted(id: ids[1], attempt: 1, attempts: 5, note: "attempt 1/5: interrupted by a stop")
        #expect(q.row(ids[1])?.status == .running && q.row(ids[1])?.attempt == 2)
        try q.markDelivered(id: ids[1])
        try q.markInterrupted(id: ids[1], attempt: 2, attempts: 5, note: "attempt 2/5: interrupted by a stop")
        #expect(q.row(ids[1])?.status == .delivered)
        #expect(try q.dueDeliveries(now: t0, limit: 10).map(\.id) == [ids[0]])
    }
}
