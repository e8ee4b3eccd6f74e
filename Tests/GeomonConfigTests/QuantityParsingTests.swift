import GeomonConfig
import GeomonCore
import Testing

/// Units as seen through the loader: `policy` keys of each quantity kind.
struct QuantityParsingTests {
    func policy(_ body: String) -> (PolicySettings?, [String]) {
        let text = "version: 1\nname: q\nmode: continuous\nsources: {gnss: {}}\npolicy:\n" + body
        let result = ProfileLoader.load(bytes: Array(text.utf8), path: "q.yaml")
        return (result.profile?.policy, result.diagnostics.map(\.message))
    }

    @Test(arguments: [
        ("10s", 10_000), ("10", 10_000), ("1.5s", 1_500), ("250ms", 250), ("5m", 300_000), ("5min", 300_000),
        ("2h", 7_200_000), ("1d", 86_400_000), ("2.5 m", 150_000), ("1e1s", 10_000),
    ])
    func durations(_ text: String, _ milliseconds: Int) {
        let (policy, messages) = policy("  fix_timeout: \(text)\n")
        #expect(messages == [])
        #expect(policy?.fixTimeout == .milliseconds(milliseconds))
    }

    @Test func retryKeysReachThePolicyConfigurationReplayAndRunShare() throws {
        // Defaults: a short listen of ttff_hot + 15 s, retries capped at max_latency (30 s) −
        // ttff_hot = 28 s; 10 s with max_latency 0.
        let (defaults, _) = policy("  fix_timeout: 90s\n")
        let d = try #require(defaults)
        #expect(d.effectiveRetryFixTimeout == .seconds(17))
        #expect(d.maxLatency == .seconds(30))
        #expect(d.effectiveRetryMaxInterval == .seconds(28))
        let (off, _) = policy("  max_latency: 0s\n")
        #expect(try #require(off).effectiveRetryMaxInterval == .seconds(10))
        let (set, messages) = policy("  retry_fix_timeout: 5s\n  retry_max_interval: 1m\n  max_acceleration: 0.3m/s2\n  receiver: {ttff_hot: 4s, min_off: 5s}\n")
        #expect(messages == [])
        let s = try #require(set)
        #expect(s.receiver.minOff == .seconds(5))
        #expect(s.effectiveRetryFixTimeout == .seconds(5))
        #expect(s.effectiveRetryMaxInterval == .seconds(60))
        // PowerConfiguration(profile:) — what both `geomon run` and `geomon replay` build — carries them.
        var profile = Profile(name: "q", mode: .regions)
        profile.policy = s
        let config = PowerConfiguration(profile: profile)
        #expect(config.retryFixTimeout == .seconds(5))
        #expect(config.maxFixTimeoutRetry == .seconds(60))
        #expect(config.maxAccelerationMetersPerSecondSquared == 0.3)
        // The default listen follows ttff_hot and never exceeds fix_timeout.
        let (capped, _) = policy("  fix_timeout: 10s\n  receiver: {ttff_hot: 4s}\n")
        #expect(capped?.effectiveRetryFixTimeout == .seconds(10))
        let (bad, badMessages) = policy("  retry_max_interval: 0\n")
        #expect(bad == nil)
        #expect(badMessages == ["'retry_max_interval' must be greater than 0 s (got 0)"])
    }

    @Test func outageRuleDefaultsByModeAndIsValidated() throws {
        // Unset: the mode decides (this loader's profiles are continuous: wait; regions: retry).
        let (unset, _) = policy("  fix_timeout: 90s\n")
        #expect(unset?.outage == nil)
        var profile = Profile(name: "q", mode: .regions)
        profile.policy = try #require(unset)
        #expect(PowerConfiguration(profile: profile).outage == .retry)
        profile.mode = .continuous
        #expect(PowerConfiguration(profile: profile).outage == .wait)
        // Set: it wins in either mode.
        let (set, messages) = policy("  outage: retry\n")
        #expect(messages == [])
        profile.policy = try #require(set)
        #expect(PowerConfiguration(profile: profile).outage == .retry)
        profile.mode = .regions
        profile.policy.outage = .wait
        #expect(PowerConfiguration(profile: profile).outage == .wait)
        let (bad, badMessages) = policy("  outage: sleep\n")
        #expect(bad == nil)
        #expect(badMessages.count == 1 && badMessages[0].contains("outage") && badMessages[0].contains("retry") && badMessages[0].contains("wait"), "\(badMessages)")
    }

    @Test(arguments: [("30m/s", 30.0), ("30", 30.0), ("90km/h", 25.0), ("3.6km/h", 1.0)])
    func speeds(_ text: String, _ metersPerSecond: Double) {
        let (policy, messages) = policy("  max_speed: \(text)\n")
        #expect(messages == [])
        #expect(abs((policy?.maxSpeedMetersPerSecond ?? -1) - metersPerSecond) < 1e-9)
    }

    @Test(arguments: [("50m", 50.0), ("50", 50.0), ("2km", 2000.0), ("0.25km", 250.0), ("0", 0.0)])
    func distances(_ text: String, _ meters: Double) {
        let (policy, messages) = policy("  wake_margin: \(text)\n")
        #expect(messages == [])
        #expect(policy?.wakeMarginMeters == meters)
    }

    @Test(arguments: [("120mW", 120.0), ("120", 120.0), ("1.5W", 1500.0)])
    func powers(_ text: String, _ milliwatts: Double) {
        let (policy, messages) = policy("  receiver: {power_acquire: \(text)}\n")
        #expect(messages == [])
        #expect(policy?.receiver.powerAcquireMilliwatts == milliwatts)
    }

    @Test(arguments: [("0.3m/s2", 0.3), ("1", 1.0), ("2.5m/s²", 2.5), ("0.5 m/s^2", 0.5)])
    func accelerations(_ text: String, _ value: Double) {
        let (policy, messages) = policy("  max_acceleration: \(text)\n")
        #expect(messages == [])
        #expect(policy?.maxAccelerationMetersPerSecondSquared == value)
    }

    @Test(arguments: [
        ("1g", "unknown unit 'g' in 'max_acceleration' (accelerations use m/s2 (also m/s² or m/s^2))"),
        ("0", "'max_acceleration' must be greater than 0 m/s2 (got 0)"),
        ("fast", "'max_acceleration' must be an acceleration such as 1m/s2 or 0.3m/s² (got 'fast')"),
    ])
    func badAccelerations(_ text: String, _ message: String) {
        let (policy, messages) = policy("  max_acceleration: \(text)\n")
        #expect(policy == nil)
        #expect(messages == [message])
    }

    @Test(arguments: [
        ("5 minutes", "unknown unit 'minutes' in 'fix_timeout' (durations use ms, s, m (minutes), h or d)"),
        ("soon", "'fix_timeout' must be a duration such as 30s, 5m or 2h (got 'soon')"),
        ("-1s", "'fix_timeout' must be greater than 0 s (got -1s)"),
        ("0", "'fix_timeout' must be greater than 0 s (got 0)"),
        ("1e400s", "'fix_timeout' must be a duration such as 30s, 5m or 2h (got '1e400s')"),
        ("99999d", "'fix_timeout' is too large (at most 3650d; got 99999d)"),
        ("0.0001ms", "'fix_timeout' must be at least 1ms (got 0.0001ms)"),
        ("[1s]", "'fix_timeout' must be a duration such as 30s, 5m or 2h (got a list)"),
    ])
    func badDurations(_ text: String, _ message: String) {
        let (policy, messages) = policy("  fix_timeout: \(text)\n")
        #expect(policy == nil)
        #expect(messages == [message])
    }
}
