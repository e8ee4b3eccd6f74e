@testable import GeomonHooks
import GeomonSystem
import Testing

/// The pthread primitives hooks run on (a hook's thread, the completion inbox's waits).
struct ThreadsTests {
    @Test func aTimedWaitEndsAtItsDeadlineAndASignalFromAnotherThreadWakesIt() {
        let condition = Condition()
        condition.lock()
        let before = Monotonic.microseconds()
        #expect(!condition.wait(until: Condition.deadline(after: 0.05)))
        #expect(Monotonic.microseconds() - before >= 50_000)
        condition.unlock()

        final class Flag: @unchecked Sendable { var set = false }
        let flag = Flag()
        startThread(named: "geomon-test") {
            condition.lock()
            flag.set = true
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        let deadline = Condition.deadline(after: 10)
        while !flag.set { if !condition.wait(until: deadline) { break } }
        #expect(flag.set)
        condition.unlock()
    }

    @Test func theCompletionInboxHandsOverWhatAnotherThreadPosts() {
        let inbox = CompletionInbox<Int>(onActivity: nil)
        startThread(named: "geomon-test") {
            for k in 0..<100 { inbox.post(k) }
        }
        var taken: [Int] = []
        let deadline = Monotonic.microseconds() + 10_000_000
        while taken.count < 100, Monotonic.microseconds() < deadline {
            inbox.wait(timeout: .milliseconds(100))
            taken += inbox.takeAll()
        }
        #expect(taken == Array(0..<100))
    }
}
