import GeomonCore
import GeomonHooks
import Testing

struct DeliverySchedulerTests {
    func d(_ id: Int64, hook: String = "h", fence: String? = "f") -> Delivery {
        let event = GeoEvent(id: "e\(id)", kind: .enter, fenceID: fence, time: UTCTime(millisecondsSince1970: id),
                             coordinate: Coordinate(latitude: 0, longitude: 0), accuracyMeters: 1, rule: .recorded(""))
        return Delivery(id: id, event: event, hookKey: hook, argv: [hook])
    }

    @Test func onlyTheEarliestPerHookAndFenceStarts() {
        let due = [d(3, fence: "a"), d(1, fence: "a"), d(2, fence: "b"), d(4, hook: "g", fence: "a")]
        let s = DeliveryScheduler.select(due: due, running: [], capacity: 10) { _ in true }
        #expect(s.start.map(\.id) == [1, 2, 4])
    }

    @Test func runningKeysAndCapacityAreRespected() {
        let due = [d(1, fence: "a"), d(2, fence: "b"), d(3, fence: "c"), d(4, fence: "d")]
        let s = DeliveryScheduler.select(due: due, running: [SerialKey(hookKey: "h", fenceID: "a")], capacity: 2) { _ in true }
        #expect(s.start.map(\.id) == [2, 3])
    }

    @Test func heldBackHeadBlocksItsKeyButNotOthers() {
        let due = [d(1, hook: "net", fence: "a"), d(2, hook: "net", fence: "a"), d(3, hook: "plain", fence: "a")]
        let s = DeliveryScheduler.select(due: due, running: [], capacity: 5) { $0.hookKey != "net" }
        #expect(s.start.map(\.id) == [3])
        #expect(s.heldBack.map(\.id) == [1])
    }

    @Test func locationEventsWithoutFenceAreSerialPerHook() {
        let due = [d(1, fence: nil), d(2, fence: nil)]
        let s = DeliveryScheduler.select(due: due, running: [], capacity: 5) { _ in true }
        #expect(s.start.map(\.id) == [1])
    }
}
