import GeomonCore
import Testing

/// `geomon receiver test`'s advice after a first fix slower than planned: a slow hot start
/// raises `ttff_hot`; only a fix as slow as a warm start can be names the warm class, whose
/// wakes cost far more (docs/power.md: 14.8 % against 88 % of always-on's on-time).
struct RestartAdviceTests {
    static let receiver = ReceiverSettings()  // ttff_hot 2 s, ttff_warm 30 s, ttff_cold 35 s

    @Test func aFixJustPastThePlannedHotStartRaisesTtffHotNotTheClass() {
        // The case reported: 2.0 s planned, a fix a few milliseconds later.
        #expect(RestartClass.advice(measured: .milliseconds(2_004), assumed: .hot, receiver: Self.receiver) == .ttffHot(.seconds(3)))
        #expect(RestartClass.advice(measured: .milliseconds(6_200), assumed: .hot, receiver: Self.receiver) == .ttffHot(.seconds(7)))
        #expect(RestartClass.advice(measured: .milliseconds(17_999), assumed: .hot, receiver: Self.receiver) == .ttffHot(.seconds(18)))
    }

    @Test func onlyAFixAsSlowAsAWarmStartCanBeNamesTheWarmClass() {
        #expect(RestartClass.advice(measured: .seconds(18), assumed: .hot, receiver: Self.receiver) == .restart(.warm))
        #expect(RestartClass.advice(measured: .seconds(29), assumed: .hot, receiver: Self.receiver) == .restart(.warm))
        #expect(RestartClass.advice(measured: .seconds(33), assumed: .hot, receiver: Self.receiver) == .restart(.cold))
        #expect(RestartClass.advice(measured: .seconds(33), assumed: .warm, receiver: Self.receiver) == .restart(.cold))
        // A receiver with assistance (`ttff_warm: 10s`) is warm from 10 s.
        var assisted = Self.receiver
        assisted.ttffWarm = .seconds(10)
        #expect(RestartClass.advice(measured: .seconds(9), assumed: .hot, receiver: assisted) == .ttffHot(.seconds(9)))
        #expect(RestartClass.advice(measured: .seconds(10), assumed: .hot, receiver: assisted) == .restart(.warm))
    }

    @Test func aFixWithinThePlanAdvisesNothing() {
        #expect(RestartClass.advice(measured: .seconds(2), assumed: .hot, receiver: Self.receiver) == nil)
        #expect(RestartClass.advice(measured: .milliseconds(400), assumed: .hot, receiver: Self.receiver) == nil)
        // A warm plan covers anything up to ttff_warm.
        #expect(RestartClass.advice(measured: .seconds(25), assumed: .warm, receiver: Self.receiver) == nil)
    }
}
