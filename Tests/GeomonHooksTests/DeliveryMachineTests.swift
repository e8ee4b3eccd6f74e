import GeomonCore
import GeomonHooks
import Testing

/// Hook delivery's decisions, synchronously: no store, no process.
struct DeliveryMachineTests {
    static func delivery(_ id: Int64, fence: String, attempt: Int = 0) -> Delivery {
        let event = GeoEvent(id: "e\(id)", kind: .enter, fenceID: fence, time: UTCTime(millisecondsSince1970: id * 1000),
                             coordinate: Coordinate(latitude: 0, longitude: 0), accuracyMeters: 5, rule: .recorded("t"))
        return Delivery(id: id, event: event, hookKey: "[\"./h\"]", argv: ["./h"], status: attempt == 0 ? .pending : .retrying, attempt: attempt)
    }

    static let now = UTCTime(millisecondsSince1970: 1_000_000)

    @Test func atMostTheCapacityStartsAndOneAtATimePerHookAndFence() {
        var machine = DeliveryMachine(settings: .init(maxConcurrent: 2))
        let due = [Self.delivery(1, fence: "a"), Self.delivery(2, fence: "a"), Self.delivery(3, fence: "b"), Self.delivery(4, fence: "c")]
        let actions = machine.select(due: due) { _ in true }
        #expect(actions == [.markRunning(id: 1, attempt: 1), .start(due[0], attempt: 1), .markRunning(id: 3, attempt: 1), .start(due[2], attempt: 1)])
        // Fence a is running: its next one waits, c takes the last place once one finished.
        #expect(machine.select(due: [due[1], due[3]]) { _ in true }.isEmpty)
        _ = machine.finished(due[2], attempt: 1, result: HookResult(termination: .exited(0)), now: Self.now)
        #expect(machine.select(due: [due[1], due[3]]) { _ in true } == [.markRunning(id: 4, attempt: 1), .start(due[3], attempt: 1)])
    }

    @Test func aFailureRetriesAtItsBackoffTheSameInEveryRunAndTheLastIsDead() {
        var retry = RetrySettings()
        retry.attempts = 3
        retry.backoff = .seconds(10)
        retry.maxBackoff = .seconds(60)
        var first = DeliveryMachine(settings: .init(retry: retry))
        var second = DeliveryMachine(settings: .init(retry: retry))
        let d = Self.delivery(7, fence: "a")
        let failed = HookResult(termination: .exited(3))
        let a = first.finished(d, attempt: 1, result: failed, now: Self.now)
        let b = second.finished(d, attempt: 1, result: failed, now: Self.now)
        #expect(a.action == b.action, "the jitter is the delivery's own")
        guard case let .retry(at) = a.decision else { Issue.record("no retry: \(a.decision)"); return }
        // Equal jitter: between half and all of the 10 s backoff.
        #expect(at >= Self.now + .seconds(5) && at < Self.now + .seconds(10))
        #expect(first.nextWake(now: Self.now) == at)
        #expect(first.finished(d, attempt: 3, result: failed, now: Self.now).decision == .dead)
        #expect(first.finished(d, attempt: 2, result: HookResult(termination: .exited(0)), now: Self.now).action == .markDelivered(id: 7))
    }

    @Test func heldBackDeliveriesRecheckTheirConditions() {
        var machine = DeliveryMachine(settings: .init(conditionRecheck: .seconds(30)))
        #expect(machine.select(due: [Self.delivery(1, fence: "a")]) { _ in false }.isEmpty)
        #expect(machine.heldBack == 1)
        #expect(machine.nextWake(now: Self.now) == Self.now + .seconds(30))
    }
}
