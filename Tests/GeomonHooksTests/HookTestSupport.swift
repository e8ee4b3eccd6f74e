import Foundation
import GeomonCore
import GeomonHooks
import GeomonTestSupport
#if canImport(Glibc)
import Glibc
#endif

enum Hooks {
    /// Absolute path of `Tests/Fixtures/hooks/<name>`.
    static func fixture(_ name: String) -> String {
        TestSupport.fixture("hooks/\(name)").path
    }

    /// The fixture directory (used as the profile directory, so `./x.sh` resolves there).
    static var fixtureDirectory: String {
        TestSupport.fixture("hooks").path
    }

    static func event(
        id: String = "ev-1", kind: EventKind = .enter, fence: String? = "home", name: String? = "Home",
        ms: Int64 = 1_714_564_800_000
    ) -> GeoEvent {
        GeoEvent(
            id: id, kind: kind, fenceID: fence, fenceName: name, time: UTCTime(millisecondsSince1970: ms),
            coordinate: Coordinate(latitude: 52.516275, longitude: 13.377704), accuracyMeters: 4.5,
            rule: .recorded("inside confirmed by 2 fixes")
        )
    }

    static func invocation(_ argv: [String], timeout: Duration = .seconds(20), event: GeoEvent = Hooks.event(), directory: String = Hooks.fixtureDirectory) -> HookInvocation {
        HookEnvironment.invocation(
            argv: argv, timeout: timeout, event: event, profileName: "test-profile", profileDirectory: directory, attempt: 1
        )
    }

    /// True once `pid` no longer runs (gone, or a zombie waiting for a reaper that is not us).
    static func isGone(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // "pid (comm) S ...": the state follows the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state == "Z" || state == "X"
    }

    /// Polls (up to `limit`) until every pid is gone; returns those still running.
    static func stillRunning(_ pids: [Int32], within limit: Duration = .seconds(5)) -> [Int32] {
        var alive = pids
        waitUntil(within: limit) {
            alive = alive.filter { !isGone($0) }
            return alive.isEmpty
        }
        return alive
    }

    /// Waits for a file written by a hook (bounded).
    static func waitForFile(_ path: String, within limit: Duration = .seconds(10)) -> String? {
        var text: String?
        waitUntil(within: limit) {
            text = (try? String(contentsOfFile: path, encoding: .utf8)).flatMap { $0.isEmpty ? nil : $0 }
            return text != nil
        }
        return text
    }

    /// Kills leftover pids after a failed assertion so a broken build does not leak sleeps.
    static func cleanup(_ pids: [Int32]) {
        for pid in pids where pid > 1 { kill(pid, SIGKILL) }
    }

    static func fastRetry(attempts: Int) -> RetrySettings {
        var retry = RetrySettings()
        retry.attempts = attempts
        retry.backoff = .milliseconds(20)
        retry.maxBackoff = .milliseconds(80)
        return retry
    }
}
