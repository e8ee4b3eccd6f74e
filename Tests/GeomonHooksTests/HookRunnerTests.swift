import Foundation
import GeomonCore
import GeomonHooks
import GeomonTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized, .timeLimit(.minutes(3)))
struct HookRunnerTests {
    let runner = HookRunner(limits: HookLimits(killGrace: .milliseconds(500)))

    @Test func environmentIsExactlyTheCleanSetPlusGeomonVariables() throws {
        let result = runner.run(Hooks.invocation(["/usr/bin/env", "-0"]))
        #expect(result.termination == .exited(0))
        var env: [String: String] = [:]
        for entry in String(decoding: result.stdout, as: UTF8.self).split(separator: "\0") {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            env[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        #expect(env == [
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "GEOMON_EVENT": "enter",
            "GEOMON_EVENT_ID": "ev-1",
            "GEOMON_FENCE": "home",
            "GEOMON_FENCE_NAME": "Home",
            "GEOMON_TIME": "2024-05-01T12:00:00Z",
            "GEOMON_LAT": "52.516275",
            "GEOMON_LON": "13.377704",
            "GEOMON_ACCURACY_M": "4.5",
            "GEOMON_PROFILE": "test-profile",
            "GEOMON_ATTEMPT": "1",
        ])
    }

    @Test func anApproachHookSeesTheFiguresInItsEnvironment() throws {
        var event = Hooks.event()
        event.kind = .approach
        event.approach = EventRule.Approach(bandMeters: 200, distanceMeters: 152.04, distanceLowerBoundMeters: 137.04, direction: .towards,
                                            closingSpeedMetersPerSecond: 1.25, eta: .milliseconds(121_632), etaLowerBound: .milliseconds(4_568),
                                            samples: 8, span: .seconds(65))
        let result = runner.run(Hooks.invocation(["/usr/bin/env", "-0"], event: event))
        #expect(result.termination == .exited(0))
        let env = String(decoding: result.stdout, as: UTF8.self).split(separator: "\0").filter { $0.hasPrefix("GEOMON_APPROACH_") }.sorted()
        #expect(env == ["GEOMON_APPROACH_BAND_M=200", "GEOMON_APPROACH_CLOSING_SPEED_MPS=1.25", "GEOMON_APPROACH_DIRECTION=towards",
                        "GEOMON_APPROACH_DISTANCE_M=152", "GEOMON_APPROACH_DISTANCE_MIN_M=137", "GEOMON_APPROACH_ETA_MIN_S=4.6",
                        "GEOMON_APPROACH_ETA_S=121.6"])
    }

    @Test func stdinIsTheEventAsOneJSONLine() throws {
        let result = runner.run(Hooks.invocation(["/bin/cat"]))
        #expect(result.termination == .exited(0))
        // The event's one encoding (as `replay` prints it), the attempt's fields, and the old
        // names `event` and `event_id` for one release.
        let expected = #"{"id":"ev-1","type":"enter","fence":"home","fence_name":"Home","time":"2024-05-01T12:00:00Z","lat":52.516275,"lon":13.377704,"accuracy_m":4.5,"rule":"inside confirmed by 2 fixes","profile":"test-profile","attempt":1,"test":false,"event":"enter","event_id":"ev-1"}"# + "\n"
        #expect(String(decoding: result.stdout, as: UTF8.self) == expected)
        // And it is valid JSON.
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
        #expect(object?["fence"] as? String == "home")
    }

    @Test func fixtureScriptSeesEnvironmentStdinAndRunsInTheProfileDirectory() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = runner.run(Hooks.invocation(["./record.sh", dir.url.path]))
        #expect(result.termination == .exited(0), "\(result.summary)")
        let stdin = try String(contentsOfFile: dir.path("stdin"), encoding: .utf8)
        #expect(stdin.hasPrefix(#"{"id":"ev-1","type":"enter""#))
        let env = try String(contentsOfFile: dir.path("env"), encoding: .utf8).split(separator: "\0")
        // sh exports PWD itself: it shows the working directory is the profile directory.
        #expect(env.contains("PWD=\(Hooks.fixtureDirectory)"))
        #expect(env.contains("GEOMON_EVENT_ID=ev-1"))
    }

    @Test func shellMetacharactersInFenceIdAndNameAreData() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let marker = dir.path("pwned")
        let fence = "$(touch \(marker))`touch \(marker)`"
        let name = "; rm -rf \(dir.url.path); touch \(marker) \"quoted\" 'single'\nsecond line $HOME | & > \(marker)"
        let event = Hooks.event(id: "ev-$(touch \(marker))", fence: fence, name: name)
        let envResult = runner.run(Hooks.invocation(["/usr/bin/env", "-0"], event: event))
        let entries = String(decoding: envResult.stdout, as: UTF8.self).split(separator: "\0").map(String.init)
        #expect(entries.contains("GEOMON_FENCE=\(fence)"))
        #expect(entries.contains("GEOMON_FENCE_NAME=\(name)"))
        #expect(entries.contains("GEOMON_EVENT_ID=ev-$(touch \(marker))"))

        let recorded = runner.run(Hooks.invocation(["./record.sh", dir.url.path], event: event))
        #expect(recorded.termination == .exited(0))
        let stdin = try Data(contentsOf: URL(fileURLWithPath: dir.path("stdin")))
        let object = try JSONSerialization.jsonObject(with: stdin) as? [String: Any]
        #expect(object?["fence"] as? String == fence)
        #expect(object?["fence_name"] as? String == name)
        #expect(!FileManager.default.fileExists(atPath: marker))
        #expect(FileManager.default.fileExists(atPath: dir.url.path))
    }

    @Test func onlyStdioIsInherited() throws {
        // A descriptor the test process opened WITHOUT close-on-exec must not reach the hook.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        #expect(leaked > 2)
        let result = runner.run(Hooks.invocation(["./list_fds.sh"]))
        #expect(result.termination == .exited(0))
        var fds: [Int] = []
        for line in String(decoding: result.stdout, as: UTF8.self).split(separator: "\n") where line.hasPrefix("l") {
            let words = line.split(separator: " ")
            guard let arrow = words.firstIndex(of: "->"), arrow > 0, let fd = Int(words[arrow - 1]) else { continue }
            // ls's own handle on the directory it lists is not inherited.
            if words.last.map({ $0.hasPrefix("/proc/") && $0.hasSuffix("/fd") }) == true { continue }
            fds.append(fd)
        }
        #expect(fds.sorted() == [0, 1, 2], "\(String(decoding: result.stdout, as: UTF8.self))")
    }

    @Test func missingExecutableIsASpawnFailureWithErrnoText() {
        let result = runner.run(Hooks.invocation(["./does-not-exist.sh"]))
        #expect(result.termination == .spawnFailed(errno: ENOENT, message: "No such file or directory"))
        #expect(result.summary.contains("does-not-exist.sh: No such file or directory"))
        #expect(!result.succeeded)
    }

    @Test func nonExecutableFileIsASpawnFailure() {
        let result = runner.run(Hooks.invocation(["./not_executable.sh"]))
        #expect(result.termination == .spawnFailed(errno: EACCES, message: "Permission denied"))
    }

    @Test func nonZeroExitIsReportedWithTheLastStderrLine() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = runner.run(Hooks.invocation(["./fail_until.sh", dir.url.path, "5"]))
        #expect(result.termination == .exited(3))
        #expect(result.summary == "exit status 3: failing on purpose (run 1)")
    }

    @Test func aFailingHooksStderrIsReadableBoundedText() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // Invalid UTF-8, an escape sequence, valid accents, then one 1 MB line: exit 3.
        let script = try dir.write("noisy.sh", """
            #!/bin/sh
            printf 'caf\\303\\251 \\377\\033[31m red\\n' >&2
            head -c 1000000 /dev/zero | tr '\\0' 'x' >&2
            exit 3

            """, mode: 0o755)
        let result = runner.run(Hooks.invocation([script]))
        #expect(result.termination == .exited(3))
        // The runner keeps the first 64 KiB and the last 4 KiB; the log line shows 300 bytes of
        // the last line, as far as the kept end holds it.
        #expect(result.stderrTruncated)
        #expect(result.summary == "exit status 3: " + String(repeating: "x", count: 300) + "… (\(HookLimits.stderrTailBytes - 300) more bytes)")
        let first = OutputText.excerpt(result.stderr)[0]
        #expect(first == "café \\xFF\\x1B[31m red")
    }

    @Test func anExcerptKeepsTheFirstAndLastLines() {
        let bytes = Array((1...1000).map { "line \($0)\r\n" }.joined().utf8)
        let excerpt = OutputText.excerpt(bytes)
        #expect(excerpt.count == 21)
        #expect(excerpt.first == "line 1" && excerpt[9] == "line 10")
        #expect(excerpt[10] == "… (980 lines omitted)")
        #expect(excerpt[11] == "line 991" && excerpt.last == "line 1000")
        #expect(OutputText.excerpt(Array("a\n\nb".utf8)) == ["a", "", "b"])
        #expect(OutputText.line(Array("\u{85}é".utf8)) == "\\xC2\\x85é")
        // A multi-byte character cut by the limit is escaped, never split into garbage.
        #expect(OutputText.line(Array("ab€".utf8), limit: 3) == "ab\\xE2… (2 more bytes)")
    }

    @Test func sleepingHookIsKilledAtItsTimeoutWithItsChildren() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = runner.run(Hooks.invocation(["./sleep_forever.sh", dir.url.path], timeout: .seconds(2)))
        let pids = (Hooks.waitForFile(dir.path("pids")) ?? "").split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        defer { Hooks.cleanup(pids) }
        #expect(result.timedOut)
        #expect(result.termination == .signaled(SIGTERM))
        #expect(pids.count == 2)
        #expect(Hooks.stillRunning(pids).isEmpty)
        #expect(result.summary.hasPrefix("timed out; killed by signal 15"))
    }

    @Test func hookIgnoringSIGTERMIsKilledAfterTheGracePeriod() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = runner.run(Hooks.invocation(["./ignore_term.sh", dir.url.path], timeout: .seconds(2)))
        let pids = (Hooks.waitForFile(dir.path("pids")) ?? "").split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        defer { Hooks.cleanup(pids) }
        #expect(result.timedOut)
        #expect(result.termination == .signaled(SIGKILL))
        #expect(pids.count == 2)
        #expect(Hooks.stillRunning(pids).isEmpty)
    }

    @Test func backgroundChildOfAFinishedHookDoesNotLeak() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = runner.run(Hooks.invocation(["./background_child.sh", dir.url.path]))
        let child = Int32((Hooks.waitForFile(dir.path("bgpid")) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        defer { Hooks.cleanup([child]) }
        #expect(result.termination == .exited(0))
        #expect(!result.timedOut)
        #expect(String(decoding: result.stdout, as: UTF8.self) == "started\n")
        #expect(child > 1)
        #expect(Hooks.stillRunning([child]).isEmpty)
    }

    @Test func processThatEscapedWithSetsidCannotKeepUsWaiting() throws {
        // Documented limit: a setsid() descendant leaves the group and survives; but holding
        // our stdout pipe open must not block the run past `drainAfterExit`.
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = runner.run(Hooks.invocation(["./escape_setsid.sh", dir.url.path], timeout: .seconds(30)))
        let escaped = Int32((Hooks.waitForFile(dir.path("pid")) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        defer { Hooks.cleanup([escaped]) }
        #expect(result.termination == .exited(0))
        #expect(!result.timedOut)
        #expect(escaped > 1)
    }

    @Test func outputBeyondTheLimitIsDrainedAndMarkedTruncated() throws {
        let limited = HookRunner(limits: HookLimits(outputLimitBytes: 1000))
        let result = limited.run(Hooks.invocation(["./chatty.sh", "3000000"]))
        #expect(result.termination == .exited(0))
        #expect(result.stdout == Array(repeating: UInt8(ascii: "o"), count: 1000))
        #expect(result.stderr == Array(repeating: UInt8(ascii: "e"), count: 1000))
        #expect(result.stdoutTruncated && result.stderrTruncated)

        let small = limited.run(Hooks.invocation(["./chatty.sh", "10"]))
        #expect(small.stdout.count == 10 && !small.stdoutTruncated && !small.stderrTruncated)
    }

    /// A hook that writes more to stderr than is kept is reported with its real last line,
    /// not a line cut off where the kept part ends.
    @Test func aFailureAfterMuchStderrIsReportedWithItsLastLine() {
        let script = #"i=0; while [ $i -lt 3000 ]; do echo "progress line $i ........................" >&2; i=$((i+1)); done; echo "FATAL: upload rejected (HTTP 403)" >&2; exit 3"#
        let result = runner.run(Hooks.invocation(["/bin/sh", "-c", script]))
        #expect(result.termination == .exited(3))
        #expect(result.stderrTruncated && result.stderr.count == HookLimits().outputLimitBytes)
        #expect(result.stderrTail.count == HookLimits.stderrTailBytes)
        #expect(result.summary == "exit status 3: FATAL: upload rejected (HTTP 403)", "\(result.summary)")
        // The last line straddling the kept start's end: whole, from the end of the stream.
        let straddling = #"head -c 65530 /dev/zero | tr '\0' 'p' >&2; printf '\nupload failed\n' >&2; exit 4"#
        let short = runner.run(Hooks.invocation(["/bin/sh", "-c", straddling]))
        #expect(short.stderrTruncated)
        #expect(short.summary == "exit status 4: upload failed", "\(short.summary)")
    }

    @Test func hookThatNeverReadsStdinCannotBlockUs() {
        // A megabyte of stdin and a hook that ignores it: the memfd stdin never blocks.
        var invocation = Hooks.invocation(["/bin/true"])
        invocation.stdin = Array(repeating: UInt8(ascii: "x"), count: 1 << 20)
        let result = runner.run(invocation)
        #expect(result.termination == .exited(0))
        #expect(!result.timedOut)
    }

    @Test func severalHooksRunConcurrentlyOnTheirOwnThreads() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        async let a = runner.runOnThread(Hooks.invocation(["./record.sh", dir.url.path]))
        async let b = runner.runOnThread(Hooks.invocation(["/bin/echo", "b"]))
        let (ra, rb) = await (a, b)
        #expect(ra.succeeded && rb.succeeded)
        #expect(rb.stdout == Array("b\n".utf8))
    }
}
