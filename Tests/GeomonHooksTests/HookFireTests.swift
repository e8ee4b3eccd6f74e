import Foundation
import GeomonCore
import GeomonHooks
import GeomonFormat
import GeomonTestSupport
import Testing

@Suite(.serialized, .timeLimit(.minutes(3)))
struct HookFireTests {
    func profile(_ dir: String) -> Profile {
        var profile = Profile(name: "garage", mode: .regions)
        profile.directory = Hooks.fixtureDirectory
        profile.fences = [Fence(id: "home", name: "Home; $(rm -rf /)", shape: .circle(center: Coordinate(latitude: 48.1, longitude: 11.5), radiusMeters: 100))]
        profile.hooks.enter = [HookSpec(exec: ["./record.sh", dir]), HookSpec(exec: ["./no-such.sh"])]
        return profile
    }

    @Test func fireRunsEveryHookOnceWithASyntheticTestEvent() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let profile = profile(dir.url.path)
        let now = UTCTime(millisecondsSince1970: 1_714_564_800_000)
        let event = try HookFire.syntheticEvent(profile: profile, kind: .enter, fenceID: "home", now: now)
        let outcomes = HookFire.run(profile: profile, event: event)
        #expect(outcomes.count == 2)
        #expect(outcomes[0].result.succeeded)
        #expect(outcomes[1].result.termination == .spawnFailed(errno: 2, message: "No such file or directory"))
        let env = try String(contentsOfFile: dir.path("env"), encoding: .utf8).split(separator: "\0")
        #expect(env.contains("GEOMON_TEST=1"))
        #expect(env.contains("GEOMON_FENCE=home"))
        #expect(env.contains("GEOMON_FENCE_NAME=Home; $(rm -rf /)"))
        #expect(env.contains("GEOMON_LAT=48.1"))
        #expect(env.contains("GEOMON_PROFILE=garage"))
        let stdin = try String(contentsOfFile: dir.path("stdin"), encoding: .utf8)
        #expect(stdin.contains(#""test":true"#))
    }

    @Test func aHooksEnvReachesItsProcessBesideGeomonsOwnVariables() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var profile = profile(dir.url.path)
        profile.hooks.enter = [HookSpec(exec: ["./record.sh", dir.url.path], environment: ["API_TOKEN": "t0k3n", "GEOMON_FENCE": "forged"])]
        let event = try HookFire.syntheticEvent(profile: profile, kind: .enter, fenceID: "home", now: UTCTime(millisecondsSince1970: 0))
        #expect(HookFire.run(profile: profile, event: event).first?.result.succeeded == true)
        let env = try String(contentsOfFile: dir.path("env"), encoding: .utf8).split(separator: "\0")
        #expect(env.contains("API_TOKEN=t0k3n"))
        // geomon's own variables cannot be overridden (the profile validator refuses them too).
        #expect(env.contains("GEOMON_FENCE=home") && !env.contains("GEOMON_FENCE=forged"))
    }

    @Test func unknownFenceAndMissingFenceAreClearErrors() throws {
        let profile = profile("/nonexistent")
        let now = UTCTime(millisecondsSince1970: 0)
        #expect(throws: HookFire.FireError.unknownFence("work", known: ["home"])) {
            try HookFire.syntheticEvent(profile: profile, kind: .enter, fenceID: "work", now: now)
        }
        #expect(throws: HookFire.FireError.fenceRequired(.exit)) {
            try HookFire.syntheticEvent(profile: profile, kind: .exit, fenceID: nil, now: now)
        }
        let location = try HookFire.syntheticEvent(profile: profile, kind: .location, fenceID: nil, now: now)
        #expect(location.fenceID == nil)
        // Motion, trips and modes carry no fence (as the daemon's do); a visit may name one.
        for kind in [EventKind.moving, .still, .tripStart, .tripEnd, .mode] {
            #expect(try HookFire.syntheticEvent(profile: profile, kind: kind, fenceID: nil, now: now).fenceID == nil)
            #expect(throws: HookFire.FireError.fenceNotCarried(kind)) {
                try HookFire.syntheticEvent(profile: profile, kind: kind, fenceID: "home", now: now)
            }
        }
        #expect(try HookFire.syntheticEvent(profile: profile, kind: .arrival, fenceID: nil, now: now).fenceID == nil)
        #expect(try HookFire.syntheticEvent(profile: profile, kind: .departure, fenceID: "home", now: now).fenceID == "home")
    }
}

struct DeliveryReportTests {
    @Test func reportShowsEventHookAndLastError() {
        let event = Hooks.event(id: "ev-9", fence: "a \"b\"")
        var delivery = Delivery(id: 7, event: event, hookKey: "k", argv: ["./notify.sh", "x y"], status: .retrying, attempt: 2,
                                nextAttemptAt: UTCTime(millisecondsSince1970: 1_714_564_860_000), lastError: "attempt 2/8: exit status 1:\nboom")
        #expect(DeliveryReport.render([delivery], maxAttempts: 8) == """
        #7 retrying attempt 2/8 next 2024-05-01T12:01:00Z
          event enter ev-9 at 2024-05-01T12:00:00Z fence "a \\"b\\""
          hook  ["./notify.sh","x y"]
          error attempt 2/8: exit status 1: boom

        """)
        delivery.status = .dead
        #expect(DeliveryReport.render([delivery]).hasPrefix("#7 dead attempt 2\n"))
    }

    @Test func jsonNumbersNeverUseExponents() {
        #expect(JSON.number(0.00001) == "0.00001")
        #expect(JSON.number(-1.5e-7) == "-0.00000015")
        #expect(JSON.number(13.377704) == "13.377704")
        #expect(JSON.number(5) == "5")
        #expect(JSON.number(.nan) == "null")
        #expect(JSON.string("a\u{1}\n\"") == #""a\u0001\n\"""#)
    }
}

struct HookFireRenderTests {
    @Test func renderShowsStatusCommandAndIndentedOutput() {
        let ok = HookFire.Outcome(argv: ["./a.sh"], result: HookResult(termination: .exited(0), stdout: Array("hi\nthere\n".utf8)))
        let bad = HookFire.Outcome(argv: ["./b.sh", "x"], result: HookResult(termination: .exited(2), stderr: Array("oops".utf8), stderrTruncated: true))
        #expect(HookFire.render([ok, bad]) == """
        ok   ["./a.sh"]: exit status 0
          stdout| hi
          stdout| there
        FAIL ["./b.sh","x"]: exit status 2: oops
          stderr| oops
          stderr| … (output truncated)

        """)
    }
}
