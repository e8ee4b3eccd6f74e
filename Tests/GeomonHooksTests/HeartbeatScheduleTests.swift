import Foundation
import GeomonCore
import GeomonHooks
import GeomonTestSupport
import Testing

struct HeartbeatScheduleTests {
    let start = UTCTime(millisecondsSince1970: 1_000_000)

    @Test func firstBeatComesSoonAfterStart() {
        let next = HeartbeatSchedule.nextBeat(lastBeat: nil, startedAt: start, now: start, every: .seconds(1800), firstDelay: .seconds(5))
        #expect(next == start + .seconds(5))
    }

    @Test func nextBeatIsOneIntervalAfterTheLast() {
        let last = start + .seconds(5)
        #expect(HeartbeatSchedule.nextBeat(lastBeat: last, startedAt: start, now: last + .seconds(1), every: .seconds(1800), firstDelay: .seconds(5)) == last + .seconds(1800))
    }

    @Test func missedBeatsAreNotReplayed() {
        let last = start
        let now = start + .seconds(3 * 1800 + 7)
        // Overdue by three intervals: one beat, now; then one interval from that beat.
        #expect(HeartbeatSchedule.nextBeat(lastBeat: last, startedAt: start, now: now, every: .seconds(1800), firstDelay: .seconds(5)) == now)
        #expect(HeartbeatSchedule.nextBeat(lastBeat: now, startedAt: start, now: now, every: .seconds(1800), firstDelay: .seconds(5)) == now + .seconds(1800))
    }
}

@Suite(.serialized, .timeLimit(.minutes(3)))
struct HeartbeatDriverTests {
    @Test func heartbeatRunsWithStatusOnStdinAndSchedulesTheNext() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var settings = HookSettings()
        settings.heartbeat = [HookSpec(exec: ["./record.sh", dir.url.path])]
        settings.heartbeatEvery = .seconds(60)
        let start = UTCTime(millisecondsSince1970: 1_714_564_800_000)
        let driver = HeartbeatDriver(settings: settings, profileName: "p", profileDirectory: Hooks.fixtureDirectory, startedAt: start, firstDelay: .seconds(2))
        var results: [HookResult] = []
        driver.onResult = { results.append($0.result) }

        #expect(driver.poll(now: start, status: { "{}" }) == start + .seconds(2))
        #expect(driver.runningCount == 0)
        let beatAt = start + .seconds(2)
        #expect(driver.poll(now: beatAt, status: { #"{"state":"ok"}"# }) == beatAt + .seconds(60))
        while driver.runningCount > 0 {
            driver.waitForActivity(timeout: .seconds(5))
            driver.poll(now: beatAt + .seconds(1), status: { "{}" })
        }
        #expect(results.count == 1 && results[0].succeeded)
        #expect(try String(contentsOfFile: dir.path("stdin"), encoding: .utf8) == #"{"state":"ok"}"# + "\n")
        let env = try String(contentsOfFile: dir.path("env"), encoding: .utf8).split(separator: "\0")
        #expect(env.contains("GEOMON_EVENT=heartbeat"))
        #expect(env.contains("GEOMON_EVENT_ID=heartbeat-1714564802000"))
    }
}
