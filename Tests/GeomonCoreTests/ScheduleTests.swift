import Foundation
import GeomonCore
import GeomonFormat
import GeomonTestSupport
import Testing

/// Time zones (TZif and POSIX rules) and `active:` windows, with hand-computed instants.
struct ScheduleTests {
    typealias T = TransitionEngineTests

    static func zone(_ file: String, _ name: String) throws -> TimeZoneRules {
        let bytes = try [UInt8](Data(contentsOf: TestSupport.fixture("tz/\(file).tzif")))
        return try #require(TimeZoneRules(tzif: bytes, name: name))
    }

    static func utc(_ text: String) throws -> UTCTime {
        try #require(UTCTime(rfc3339: text))
    }

    // MARK: - Time zones

    @Test func zurichChangesItsClocksOnTheLastSundaysOfMarchAndOctober() throws {
        let zurich = try Self.zone("Europe-Zurich", "Europe/Zurich")
        // 2026-03-29 01:00Z: CET (UTC+1) → CEST (UTC+2); 2026-10-25 01:00Z back.
        #expect(zurich.offsetSeconds(atUTC: Int64(try Self.utc("2026-03-29T00:59:59Z").millisecondsSince1970 / 1000)) == 3600)
        #expect(zurich.offsetSeconds(atUTC: Int64(try Self.utc("2026-03-29T01:00:00Z").millisecondsSince1970 / 1000)) == 7200)
        #expect(zurich.offsetSeconds(atUTC: Int64(try Self.utc("2026-10-25T00:59:59Z").millisecondsSince1970 / 1000)) == 7200)
        #expect(zurich.offsetSeconds(atUTC: Int64(try Self.utc("2026-10-25T01:00:00Z").millisecondsSince1970 / 1000)) == 3600)
        // Past the file's last transition (2037) the footer's rule: 2100-03-28 is the last
        // Sunday of March 2100.
        #expect(zurich.offsetSeconds(atUTC: Int64(try Self.utc("2100-03-28T00:59:59Z").millisecondsSince1970 / 1000)) == 3600)
        #expect(zurich.offsetSeconds(atUTC: Int64(try Self.utc("2100-03-28T01:00:00Z").millisecondsSince1970 / 1000)) == 7200)
        // 02:30 local does not exist on 2026-03-29: the wall clock passes it at the jump.
        let local = Int64(try Self.utc("2026-03-29T02:30:00Z").millisecondsSince1970 / 1000)
        #expect(zurich.utcSeconds(fromLocal: local) == Int64(try Self.utc("2026-03-29T01:00:00Z").millisecondsSince1970 / 1000))
        // 02:30 local happens twice on 2026-10-25: the first.
        let twice = Int64(try Self.utc("2026-10-25T02:30:00Z").millisecondsSince1970 / 1000)
        #expect(zurich.utcSeconds(fromLocal: twice) == Int64(try Self.utc("2026-10-25T00:30:00Z").millisecondsSince1970 / 1000))
    }

    /// Every 3 hours of 1990–2060 against CPython's `zoneinfo` reading the same file (an
    /// independent reader of TZif and its POSIX rule).
    @Test(arguments: [("Europe-Zurich", "Europe/Zurich"), ("Australia-Sydney", "Australia/Sydney")])
    func offsetsAgreeWithPythonsZoneinfo(_ file: String, _ name: String) throws {
        let rules = try Self.zone(file, name)
        let start: Int64 = 631_152_000, end: Int64 = 2_871_763_200, step: Int64 = 10_800
        let script = """
            import datetime, sys, zoneinfo
            z = zoneinfo.ZoneInfo.from_file(open(sys.argv[1], "rb"))
            out = []
            for t in range(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])):
                out.append(str(int(datetime.datetime.fromtimestamp(t, z).utcoffset().total_seconds())))
            print("\\n".join(out))
            """
        let result = try runProcess(URL(fileURLWithPath: "/usr/bin/python3"),
                                    ["-c", script, TestSupport.fixture("tz/\(file).tzif").path, "\(start)", "\(end)", "\(step)"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        let expected = result.stdout.split(separator: "\n").map { Int32($0) }
        var mismatches: [Int64] = []
        var t = start
        for offset in expected {
            if rules.offsetSeconds(atUTC: t) != offset { mismatches.append(t) }
            t += step
        }
        #expect(expected.count == Int((end - start) / step))
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test func posixRulesAloneGiveTheSameAnswers() throws {
        // A zone with no transitions but the footer (as a slim TZif has after its data).
        let zurich = try Self.zone("Europe-Zurich", "Europe/Zurich")
        for text in ["2026-03-29T00:59:59Z", "2026-03-29T01:00:00Z", "2026-07-01T12:00:00Z", "2026-10-25T01:00:00Z", "2026-12-31T23:00:00Z"] {
            let s = Int64(try Self.utc(text).millisecondsSince1970 / 1000)
            let expected: Int32 = (text.hasPrefix("2026-03-29T01") || text.hasPrefix("2026-07")) ? 7200 : 3600
            #expect(zurich.offsetSeconds(atUTC: s) == expected, "\(text)")
        }
    }

    // MARK: - Windows

    static let weekdayMornings = FenceSchedule(windows: [FenceSchedule.Window(days: [0, 1, 2, 3, 4], start: 7 * 60, end: 9 * 60)])
    static let nights = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0..<7), start: 22 * 60, end: 6 * 60)])

    @Test func windowsAreLocalWallClockTimeAcrossTheClockChange() throws {
        let zurich = try Self.zone("Europe-Zurich", "Europe/Zurich")
        let s = Self.weekdayMornings
        // Friday 2026-03-27 (CET): 07:00 local is 06:00Z.
        #expect(!s.isActive(at: try Self.utc("2026-03-27T05:59:59Z"), zone: zurich))
        #expect(s.isActive(at: try Self.utc("2026-03-27T06:00:00Z"), zone: zurich))
        #expect(!s.isActive(at: try Self.utc("2026-03-27T08:00:00Z"), zone: zurich))
        // Monday 2026-03-30 (CEST): 07:00 local is 05:00Z, 09:00 local 07:00Z.
        #expect(s.isActive(at: try Self.utc("2026-03-30T05:00:00Z"), zone: zurich))
        #expect(!s.isActive(at: try Self.utc("2026-03-30T07:00:00Z"), zone: zurich))
        // Saturday: never.
        #expect(!s.isActive(at: try Self.utc("2026-03-28T06:30:00Z"), zone: zurich))
        // From Friday 08:00Z the next change is Monday 05:00Z (the window's start after the change).
        #expect(s.nextChange(after: try Self.utc("2026-03-27T08:00:00Z"), zone: zurich) == (try Self.utc("2026-03-30T05:00:00Z")))
        #expect(s.nextChange(after: try Self.utc("2026-03-30T05:00:00Z"), zone: zurich) == (try Self.utc("2026-03-30T07:00:00Z")))
        // A night window runs past midnight, listed under the day it starts.
        #expect(Self.nights.isActive(at: try Self.utc("2026-03-31T03:00:00Z"), zone: zurich))
        #expect(!Self.nights.isActive(at: try Self.utc("2026-03-31T04:00:00Z"), zone: zurich))
        #expect(Self.nights.nextChange(after: try Self.utc("2026-03-31T12:00:00Z"), zone: zurich) == (try Self.utc("2026-03-31T20:00:00Z")))
    }

    @Test func aWindowEdgeInTheRepeatedHourComesTwiceAndTheJumpBackIsAChange() throws {
        // Daily 22:00–02:30 in Zurich; 2026-10-25 01:00Z the clocks go back from 03:00 CEST to
        // 02:00 CET, so 02:30 local is 00:30Z and again 01:30Z. Active until 00:30Z, inactive
        // at 02:30–02:59 CEST, active again from the jump (02:00 CET, 01:00Z), and inactive
        // from the second 02:30 (01:30Z) until 22:00 CET (21:00Z).
        let zurich = try Self.zone("Europe-Zurich", "Europe/Zurich")
        let s = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0..<7), start: 22 * 60, end: 150)])
        let twice = Int64(try Self.utc("2026-10-25T02:30:00Z").millisecondsSince1970 / 1000)
        #expect(zurich.utcInstants(fromLocal: twice) == [try Self.utc("2026-10-25T00:30:00Z"), try Self.utc("2026-10-25T01:30:00Z")].map { $0.millisecondsSince1970 / 1000 })
        var at = try Self.utc("2026-10-24T23:50:00Z")
        var changes: [UTCTime] = []
        for _ in 0..<4 {
            guard let next = s.nextChange(after: at, zone: zurich) else { break }
            #expect(s.isActive(at: next, zone: zurich) != s.isActive(at: at, zone: zurich))
            changes.append(next)
            at = next
        }
        #expect(changes == [try Self.utc("2026-10-25T00:30:00Z"), try Self.utc("2026-10-25T01:00:00Z"),
                            try Self.utc("2026-10-25T01:30:00Z"), try Self.utc("2026-10-25T21:00:00Z")])
    }

    // MARK: - The engine

    static func profile(initial: InitialReport, zone: TimeZoneRules = .utc) -> Profile {
        var p = T.profile(initial: initial, events: [.enter, .exit, .dwell], dwell: .seconds(600))
        // Active 00:10–00:20 UTC every day (fix times in the tests count seconds from 1970-01-01T00:00Z).
        p.fences[0].active = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0..<7), start: 10, end: 20)])
        p.timeZone = zone
        return p
    }

    @Test func outsideItsWindowsAFenceReportsNothingButItsStateIsKept() {
        var engine = TransitionEngine(profile: Self.profile(initial: .silent))
        // In at 60 s (inactive: no enter, state inside), out at 200 s (no exit), in at 700 s
        // (active: enter); the window closes at 1200 s while inside: the exit that closes the
        // stay; out at 1300 s (inactive: nothing more).
        let events = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(60, 0), T.fix(61, 0), T.fix(200, 300), T.fix(201, 300),
                                     T.fix(700, 0), T.fix(701, 0), T.fix(1300, 300), T.fix(1301, 300)])
        #expect(T.summary(events) == ["enter@700", "exit@1200"])
        #expect(events.last?.rule.text == "exit: the fence's active window closed while inside; inside since 1970-01-01T00:11:40Z")
        #expect(engine.state(of: "home") == .outside)
    }

    @Test func aWindowClosingWhileInsideReportsExitOnceAtTheClosing() {
        // Inside from 700 s (active), still inside at 1300 s (after the 1200 s closing).
        let fixes = [T.fix(1, 300), T.fix(2, 300), T.fix(700, 0), T.fix(701, 0), T.fix(1300, 0), T.fix(1400, 0)]
        for initial in [InitialReport.silent, .report] {
            var engine = TransitionEngine(profile: Self.profile(initial: initial))
            let events = T.run(&engine, fixes)
            #expect(T.summary(events) == ["enter@700", "exit@1200"], "\(initial)")
            guard case let .closed(closure)? = events.last?.rule else {
                Issue.record("not a closing: \(String(describing: events.last?.rule))")
                continue
            }
            #expect(closure.reason == .windowClosed && closure.insideSince == T.time(700))
            #expect(events.last?.fenceName == "Home")
            // Without deadlines the next fix finds the closing, with the same instant and id.
            var late = TransitionEngine(profile: Self.profile(initial: initial))
            #expect(T.run(&late, fixes, deadlines: false).map(\.id) == events.map(\.id))
            // The device is still inside: the state is kept, and leaving while inactive says nothing.
            #expect(engine.state(of: "home") == .inside)
            #expect(T.run(&engine, [T.fix(1500, 300), T.fix(1501, 300)]).isEmpty)
        }
    }

    @Test func aChangeConfirmedAfterTheClosingIsNotReported() {
        // An enter first seen at 1190 s (active) and confirmed at 1210 s (inactive): the
        // consumers would be left inside a fence no longer watched; the opening reports it.
        var engine = TransitionEngine(profile: Self.profile(initial: .report))
        let events = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(1190, 0), T.fix(1210, 0), T.fix(86_400 + 700, 0)])
        #expect(T.summary(events) == ["enter@87000"])
        #expect(engine.state(of: "home") == .inside)
    }

    @Test func aStoppedDaemonCatchesUpOnTheFirstClosingAndTheLastOpening() {
        var engine = TransitionEngine(profile: Self.profile(initial: .report))
        var events = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(700, 0), T.fix(701, 0)])
        // Three days later: closed at 1200 s, opened at 3 × 86 400 + 600 s.
        events += engine.fixReceived(T.fix(3 * 86_400 + 700, 0)).events
        // The first dwell (due at 1300 s, inactive then) is fired by the fix, in the window.
        #expect(T.summary(events) == ["enter@700", "exit@1200", "enter@259800", "dwell@259900"])
        // Seen from a snapshot taken before, the same events with the same ids.
        var resumed = TransitionEngine(profile: Self.profile(initial: .report))
        let first = T.run(&resumed, [T.fix(1, 300), T.fix(2, 300), T.fix(700, 0), T.fix(701, 0)])
        var restarted = TransitionEngine(profile: Self.profile(initial: .report), snapshot: resumed.snapshot)
        let later = restarted.start(at: T.time(3 * 86_400 + 650)) + restarted.fixReceived(T.fix(3 * 86_400 + 700, 0)).events
        #expect((first + later).map(\.id) == events.map(\.id))
    }

    @Test func aWindowOpeningWhileInsideReportsEnterOnlyWithInitialReport() {
        // Inside from 60 s; the window opens at 600 s; the dwell (600 s) is due at 660 s, in it.
        let fixes = [T.fix(1, 300), T.fix(2, 300), T.fix(60, 0), T.fix(61, 0), T.fix(900, 0)]
        var silent = TransitionEngine(profile: Self.profile(initial: .silent))
        #expect(T.summary(T.run(&silent, fixes)) == ["dwell@660"])
        var report = TransitionEngine(profile: Self.profile(initial: .report))
        // The deadline at 600 s fires the enter at the opening, with the enter position.
        #expect(report.deadlineReached(at: T.time(0)).isEmpty)
        let events = T.run(&report, fixes)
        #expect(T.summary(events) == ["enter@600", "dwell@660"])
        #expect(events.first?.rule.text == "enter: inside since 1970-01-01T00:01:00Z when the fence became active (initial: report)")
        #expect(events.first?.coordinate == T.at(0))
        // Without deadlines the next fix finds it, with the same time and id.
        var late = TransitionEngine(profile: Self.profile(initial: .report))
        #expect(T.run(&late, fixes, deadlines: false).first?.id == events.first?.id)
    }

    @Test func everyOpeningWhileInsideIsADeadline() {
        var engine = TransitionEngine(profile: Self.profile(initial: .report))
        // Inside from 60 s; the window is open 600–1200 s every day.
        let events = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(60, 0), T.fix(61, 0), T.fix(900, 0)])
        #expect(T.summary(events) == ["enter@600", "dwell@660"])
        // Open now: the closing is the next deadline, then the next day's opening.
        #expect(engine.nextDeadline == T.time(1200))
        #expect(T.summary(engine.deadlineReached(at: T.time(1200))) == ["exit@1200"])
        #expect(engine.nextDeadline == T.time(86_400 + 600))
        #expect(T.summary(engine.deadlineReached(at: T.time(86_400 + 600))) == ["enter@87000"])
    }

    @Test func aDwellDueOutsideTheWindowIsCountedNotReported() {
        var engine = TransitionEngine(profile: Self.profile(initial: .silent))
        // In at 700 s (active); the dwell is due at 1300 s, after the window: counted, not
        // reported (the closing at 1200 s closed the stay for consumers).
        let events = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(700, 0), T.fix(701, 0), T.fix(1400, 0)])
        #expect(T.summary(events) == ["enter@700", "exit@1200"])
        #expect(engine.snapshot.records.first?.dwellCount == 1)
    }
}

/// The power policy with `active:` windows: no wake for a fence outside its windows, a wake in
/// time for one about to open.
struct SchedulePowerTests {
    typealias M = MonitorTests

    /// The wake the machine plans after two fixes 400 m east of the fence's centre (300 m from
    /// its boundary), standing still.
    static func plannedSleep(_ schedule: FenceSchedule?) -> Double? {
        var profile = M.profile()
        profile.fences[0].active = schedule
        var m = M.machine(profile)
        _ = m.fixReceived(M.fix(1, 400), now: M.at(1))
        let effects = m.fixReceived(M.fix(2, 400), now: M.at(2))
        for effect in effects {
            if case let .power(.wakeAt(time, _)) = effect { return (time - M.at(2)).secondsValue }
        }
        return nil
    }

    @Test func aFenceOutsideItsWindowsDoesNotShortenTheSleep() throws {
        // Active: 300 m at max_speed 45 m/s less the margins is a few seconds' sleep.
        let active = try #require(Self.plannedSleep(nil))
        #expect(active < 10)
        // Never active on the test's day (2023-11-14, a Tuesday): the fence is ignored and the
        // sleep is max_sleep.
        let sundays = FenceSchedule(windows: [FenceSchedule.Window(days: [6], start: 0, end: 60)])
        #expect(try #require(Self.plannedSleep(sundays)) == 600)
        // Opening in 98 s (t0 + 2 s is 22:13:22Z): the fence counts as far as the device can
        // go by then (45 m/s × 98 s = 4410 m, no speed reported), so the sleep is longer than
        // for an active fence, and its fix comes before the device, waiting at the edge for the
        // opening, could have gone in and out (3 × 10 m hysteresis more: max_latency's
        // excursion rule): (4410 − 5 + 30) m / 45 m/s − 2 s ttff = 96.554 s.
        let soon = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0..<7), start: 22 * 60 + 15, end: 23 * 60)])
        let sleep = try #require(Self.plannedSleep(soon))
        #expect(sleep > active && sleep + 2 <= 98 + 30.0 / 45, "\(sleep)")
    }
}
