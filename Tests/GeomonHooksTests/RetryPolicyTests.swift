import GeomonCore
import GeomonHooks
import Testing

struct RetryPolicyTests {
    static let settings: RetrySettings = {
        var s = RetrySettings()
        s.attempts = 8
        s.backoff = .seconds(2)
        s.maxBackoff = .seconds(600)
        return s
    }()

    @Test(arguments: [
        (1, 0.0, 1000), (1, 0.999_999, 1999), (2, 0.0, 2000), (3, 0.5, 6000),
        (4, 0.0, 8000), (9, 0.0, 256_000), (10, 0.0, 300_000), (50, 1.0, 600_000),
    ])
    func delayIsCappedExponentialWithEqualJitter(attempt: Int, unit: Double, expectedMs: Int64) {
        #expect(RetryPolicy.delay(afterAttempt: attempt, settings: Self.settings, jitterUnit: unit).wholeMilliseconds == expectedMs)
    }

    @Test func lastAttemptDeadLetters() {
        let now = UTCTime(millisecondsSince1970: 1_000_000)
        #expect(RetryPolicy.decide(afterAttempt: 8, settings: Self.settings, now: now, jitterUnit: 0.3) == .deadLetter)
        #expect(RetryPolicy.decide(afterAttempt: 7, settings: Self.settings, now: now, jitterUnit: 0) ==
            .retry(at: now + .seconds(64), delay: .seconds(64)))
    }

    @Test func hugeAttemptNumbersDoNotOverflow() {
        var s = Self.settings
        s.maxBackoff = .seconds(Int64.max / 4_000)
        let d = RetryPolicy.delay(afterAttempt: 10_000, settings: s, jitterUnit: 1)
        #expect(d > .zero)
    }

    @Test func seededGeneratorIsReproducibleAndInUnitRange() {
        var a = SplitMix64(seed: 7), b = SplitMix64(seed: 7)
        let xs = (0..<100).map { _ in a.nextUnit() }
        let ys = (0..<100).map { _ in b.nextUnit() }
        #expect(xs == ys)
        #expect(xs.allSatisfy { $0 >= 0 && $0 < 1 })
        #expect(Set(xs).count == 100)
    }
}
