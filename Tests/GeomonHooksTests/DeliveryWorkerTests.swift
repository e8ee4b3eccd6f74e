import Foundation
import GeomonCore
import GeomonHooks
import GeomonStore
import GeomonSystem
import GeomonTestSupport
import Testing

@Suite(.serialized, .timeLimit(.minutes(3)))
struct DeliveryWorkerTests {
    private func worker(
        _ queue: any TestDeliveryQueue, hooks: [HookSpec], retry: RetrySettings = Hooks.fastRetry(attempts: 3),
        maxConcurrent: Int = 4, probe: ConditionProbe = ConditionProbe()
    ) -> DeliveryWorker {
        var settings = HookSettings()
        settings.enter = hooks
        settings.exit = hooks
        var workerSettings = DeliveryWorker.Settings(
            profileName: "test-profile", profileDirectory: Hooks.fixtureDirectory, retry: retry, maxConcurrent: maxConcurrent
        )
        workerSettings.conditionRecheck = .milliseconds(50)
        return DeliveryWorker(
            queue: queue, settings: workerSettings, catalog: HookCatalog(settings: settings),
            runner: HookRunner(limits: HookLimits(killGrace: .milliseconds(300))), probe: probe
        )
    }

    @Test func failingTwiceThenSucceedingIsDeliveredOnAttemptThreeWithTheSameEventID() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let hook = HookSpec(exec: ["./fail_until.sh", dir.url.path, "3"])
        let queue = QueueFactory.make()
        let id = queue.enqueue(Hooks.event(id: "ev-stable"), hooks: [hook])[0]
        let worker = worker(queue, hooks: [hook], retry: Hooks.fastRetry(attempts: 5))
        var decisions: [DeliveryWorker.Decision] = []
        worker.onOutcome = { decisions.append($0.decision) }
        #expect(try worker.runUntilSettled(timeout: .seconds(20)))
        let row = try #require(queue.row(id))
        #expect(row.status == .delivered)
        #expect(row.attempt == 3)
        #expect(row.lastError == "attempt 2/5: exit status 3: failing on purpose (run 2)")
        let log = try String(contentsOfFile: dir.path("log"), encoding: .utf8)
        #expect(log == "ev-stable 1\nev-stable 2\nev-stable 3\n")
        #expect(decisions.count == 3)
        #expect(decisions.last == .delivered)
    }

    @Test func anAttemptTheStoreCouldNotMarkRunningStaysDueForTheNextPoll() throws {
        // Another writer holds the database past the busy timeout (5 s): marking the attempt
        // running fails, the hook does not start, and its (hook, fence) queue is not left
        // blocked behind an attempt that never ran.
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let hook = HookSpec(exec: ["./fail_until.sh", dir.url.path, "1"])
        let queue = SQLiteDeliveryQueue()
        let id = queue.enqueue(Hooks.event(id: "ev-busy"), hooks: [hook])[0]
        let worker = worker(queue, hooks: [hook])
        let blocker = try Connection(path: queue.path, busyTimeoutMilliseconds: 0)
        try blocker.execute("BEGIN IMMEDIATE")
        #expect(throws: SQLiteError.self) { try worker.poll(now: WallClock.now()) }
        #expect(worker.runningCount == 0)
        try blocker.execute("COMMIT")
        #expect(try worker.runUntilSettled(timeout: .seconds(20)))
        #expect(queue.row(id)?.status == .delivered)
        #expect(try String(contentsOfFile: dir.path("log"), encoding: .utf8) == "ev-busy 1\n")
    }

    /// One delivery to a hook that fails its first attempt, retried after 30–60 s.
    private static func failingOnce(in dir: TemporaryDirectory) -> (hook: HookSpec, queue: any TestDeliveryQueue, id: Int64, retry: RetrySettings) {
        let hook = HookSpec(exec: ["./fail_until.sh", dir.url.path, "2"])
        let queue = QueueFactory.make()
        let id = queue.enqueue(Hooks.event(), hooks: [hook])[0]
        var retry = Hooks.fastRetry(attempts: 3)
        retry.backoff = .seconds(60)
        retry.maxBackoff = .seconds(60)
        return (hook, queue, id, retry)
    }

    @Test func pollReportsTheRetryTimeAsItsNextWake() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (hook, queue, id, retry) = Self.failingOnce(in: dir)
        let worker = worker(queue, hooks: [hook], retry: retry)
        let t0 = UTCTime(millisecondsSince1970: 1_714_564_800_000)
        #expect(try worker.poll(now: t0) == nil, "nothing scheduled while the hook runs")
        #expect(worker.runningCount == 1)
        while worker.runningCount > 0 {
            worker.waitForActivity(timeout: .seconds(5))
            let wake = try worker.poll(now: t0 + .seconds(1))
            if worker.runningCount == 0 {
                let row = try #require(queue.row(id))
                #expect(row.status == .retrying)
                #expect(wake == row.nextAttemptAt)
                // Equal jitter on a 60 s base: between 30 s and 60 s after the failure.
                let delay = try #require(wake) - (t0 + .seconds(1))
                #expect(delay >= .seconds(30) && delay <= .seconds(60))
            }
        }
        #expect(try worker.poll(now: t0 + .seconds(2)) != nil)
        #expect(worker.runningCount == 0, "not due before its retry time")
    }

    /// A reload (SIGHUP) replaces the worker while a retry waits in the store, and a hook the
    /// old worker started may still fail into a retry: the new worker learns the stored
    /// retries, and the retiring one, which starts nothing, says when its retry is due.
    @Test func aWorkerForAReloadedProfileWakesForRetriesTheStoreAndItsPredecessorHold() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (hook, queue, id, retry) = Self.failingOnce(in: dir)
        let old = worker(queue, hooks: [hook], retry: retry)
        let t0 = UTCTime(millisecondsSince1970: 1_714_564_800_000)
        _ = try old.poll(now: t0)
        #expect(old.runningCount == 1)
        // Reloaded while attempt 1 runs: the old worker only records it.
        let successor = worker(queue, hooks: [hook], retry: retry)
        try successor.learnRetries()
        var retiringWake: UTCTime?
        while old.runningCount > 0 {
            old.waitForActivity(timeout: .seconds(5))
            retiringWake = try old.drain(now: t0 + .seconds(1))
        }
        let due = try #require(queue.row(id)?.nextAttemptAt)
        #expect(retiringWake == due)
        #expect(try old.drain(now: t0 + .seconds(2)) == due)
        #expect(old.runningCount == 0)
        // A worker made now (the next reload) knows the stored retry at once.
        let next = worker(queue, hooks: [hook], retry: retry)
        #expect(try next.poll(now: t0 + .seconds(2)) == nil)
        try next.learnRetries()
        #expect(try next.poll(now: t0 + .seconds(2)) == due)
        #expect(try next.runUntilSettled(timeout: .seconds(20)) { due })
        #expect(queue.row(id)?.status == .delivered)
    }

    /// Stopping ends running hooks as their timeout would (SIGTERM to the group, SIGKILL after
    /// the grace), so no hook outlives the daemon to overlap its own delivery run again. The
    /// attempt is interrupted, not failed: even the last one is left `running`, never
    /// dead-lettered, and runs again after the restart (as after a crash).
    @Test func stoppedHooksEndAsTheirTimeoutWouldAndTheirAttemptRunsAgainAfterTheRestart() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let pidFile = dir.path("pid")
        let slow = dir.path("slow")
        #expect(FileManager.default.createFile(atPath: slow, contents: Data()))
        let hook = HookSpec(exec: ["/bin/sh", "-c", #"echo $$ > "$0"; if [ -e "$1" ]; then exec sleep 60; fi"#, pidFile, slow])
        let queue = QueueFactory.make()
        let id = queue.enqueue(Hooks.event(id: "ev-stop"), hooks: [hook])[0]
        let first = worker(queue, hooks: [hook], retry: Hooks.fastRetry(attempts: 1))
        var decisions: [DeliveryWorker.Decision] = []
        first.onOutcome = { decisions.append($0.decision) }
        _ = try first.poll(now: WallClock.now())
        #expect(first.runningCount == 1)
        #expect(waitUntil(within: .seconds(10)) { (try? String(contentsOfFile: pidFile, encoding: .utf8))?.hasSuffix("\n") == true })
        let pid = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        first.stopHooks()
        #expect(waitUntil(within: .seconds(10)) {
            _ = try? first.drain(now: WallClock.now())
            return first.runningCount == 0
        })
        #expect(decisions == [.interrupted])
        // Due again, the attempt not counted: its only attempt is still to come.
        let row = try #require(queue.row(id))
        #expect(row.status == .retrying && row.attempt == 0, "\(row)")
        #expect(kill(pid, 0) != 0, "the hook outlived the stop")
        // The restart: the delivery runs again as attempt 1 of 1 and is delivered.
        try FileManager.default.removeItem(atPath: slow)
        let next = worker(queue, hooks: [hook], retry: Hooks.fastRetry(attempts: 1))
        var attempts: [Int] = []
        next.onOutcome = { attempts.append($0.attempt) }
        try next.recover()
        #expect(try next.runUntilSettled(timeout: .seconds(20)))
        #expect(queue.row(id)?.status == .delivered)
        #expect(attempts == [1])
    }

    /// A hook that takes geomon down during every attempt (a reboot, the OOM killer): geomon
    /// records nothing, and each start recovers the attempt as counted. After the last of its
    /// attempts the delivery is dead-lettered, not run after every boot for ever.
    @Test func aHookThatTakesGeomonDownEveryTimeIsDeadLetteredAfterItsAttempts() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path("attempts")
        let pidFile = dir.path("pid")
        let hook = HookSpec(exec: ["/bin/sh", "-c", #"echo "$GEOMON_ATTEMPT" >> "$0"; echo $$ > "$1"; exec sleep 60"#, log, pidFile])
        let queue = QueueFactory.make()
        let id = queue.enqueue(Hooks.event(id: "ev-crash"), hooks: [hook])[0]
        for boot in 1...4 {
            // Each boot: a new worker recovers what the last one left running and starts what is due.
            let worker = worker(queue, hooks: [hook], retry: Hooks.fastRetry(attempts: 2))
            try worker.recover()
            _ = try worker.poll(now: WallClock.now())
            guard worker.runningCount == 1 else { break }
            #expect(waitUntil(within: .seconds(10)) {
                (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").count == boot
                    && (try? String(contentsOfFile: pidFile, encoding: .utf8))?.hasSuffix("\n") == true
            })
            // The machine goes down: the hook dies with it and geomon records nothing.
            let pid = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            try FileManager.default.removeItem(atPath: pidFile)
            kill(pid, SIGKILL)
        }
        let last = worker(queue, hooks: [hook], retry: Hooks.fastRetry(attempts: 2))
        try last.recover()
        let runs = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(runs == ["1", "2"], "\(runs)")
        let row = try #require(queue.row(id))
        #expect(row.status == .dead && row.attempt == 2, "\(row)")
        #expect(row.lastError?.hasPrefix("attempt 2/2: geomon stopped during it without recording its end") == true, "\(row.lastError ?? "-")")
    }

    @Test func missingAndNonExecutableHooksAreDeadLetteredAfterTheLastAttempt() throws {
        let missing = HookSpec(exec: ["./no-such-hook.sh"])
        let notExecutable = HookSpec(exec: ["./not_executable.sh"])
        let queue = QueueFactory.make()
        let ids = queue.enqueue(Hooks.event(), hooks: [missing, notExecutable])
        let worker = worker(queue, hooks: [missing, notExecutable], retry: Hooks.fastRetry(attempts: 3))
        var attempts: [Int] = []
        worker.onOutcome = { attempts.append($0.attempt) }
        #expect(try worker.runUntilSettled(timeout: .seconds(20)))
        let a = try #require(queue.row(ids[0]))
        let b = try #require(queue.row(ids[1]))
        #expect(a.status == .dead && a.attempt == 3)
        #expect(b.status == .dead && b.attempt == 3)
        #expect(a.lastError == "attempt 3/3: cannot run \(Hooks.fixtureDirectory)/no-such-hook.sh: No such file or directory")
        #expect(b.lastError == "attempt 3/3: cannot run \(Hooks.fixtureDirectory)/not_executable.sh: Permission denied")
        #expect(attempts.sorted() == [1, 1, 2, 2, 3, 3])

        // `hooks retry`: requeued dead deliveries run again from attempt 1.
        #expect(try queue.requeueDead() == 2)
        #expect(try queue.deliveries(status: .pending).count == 2)
    }

    @Test func aThousandEventsToASlowHookKeepPerFenceOrder() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let log = dir.path("order.log")
        let hook = HookSpec(exec: ["./ordered.sh", log])
        let queue = QueueFactory.make()
        let fences = ["a", "b", "c", "d"]
        var expected: [String: [String]] = [:]
        for n in 0..<1000 {
            let fence = fences[(n * 7 + n / 3) % fences.count]
            let kind: EventKind = n % 2 == 0 ? .enter : .exit
            let id = "ev-\(n)"
            queue.enqueue(Hooks.event(id: id, kind: kind, fence: fence, ms: 1_714_564_800_000 + Int64(n) * 1000), hooks: [hook])
            expected[fence, default: []].append(id)
        }
        let worker = worker(queue, hooks: [hook], maxConcurrent: 4)
        var maxRunning = 0
        worker.onOutcome = { [unowned worker] _ in maxRunning = max(maxRunning, worker.runningCount + 1) }
        #expect(try worker.runUntilSettled(timeout: .seconds(50)))
        #expect(try queue.deliveries(status: .delivered).count == 1000)
        var seen: [String: [String]] = [:]
        for line in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            let parts = line.split(separator: " ")
            seen[String(parts[0]), default: []].append(String(parts[1]))
        }
        #expect(seen == expected)
        #expect(maxRunning > 1, "different fences run concurrently")
    }

    @Test func perHookAndFenceDeliveriesAreSerialEvenWhenTheFirstIsRetrying() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let hook = HookSpec(exec: ["./fail_until.sh", dir.url.path, "2"])
        let queue = QueueFactory.make()
        queue.enqueue(Hooks.event(id: "first", kind: .enter), hooks: [hook])
        queue.enqueue(Hooks.event(id: "second", kind: .exit), hooks: [hook])
        let worker = worker(queue, hooks: [hook], retry: Hooks.fastRetry(attempts: 4))
        #expect(try worker.runUntilSettled(timeout: .seconds(20)))
        // "first" fails once and is retried BEFORE "second" runs at all.
        let log = try String(contentsOfFile: dir.path("log"), encoding: .utf8)
        #expect(log == "first 1\nfirst 2\nsecond 1\n")
    }

    @Test func interruptedAttemptsRunAgainWithTheSameEventID() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let hook = HookSpec(exec: ["./fail_until.sh", dir.url.path, "1"])
        let queue = QueueFactory.make()
        let id = queue.enqueue(Hooks.event(id: "ev-crash"), hooks: [hook])[0]
        try queue.markRunning(id: id, attempt: 1) // a previous daemon died here
        let worker = worker(queue, hooks: [hook])
        try worker.recover()
        #expect(try worker.runUntilSettled(timeout: .seconds(20)))
        #expect(queue.row(id)?.status == .delivered)
        #expect(queue.row(id)?.attempt == 2)
        #expect(try String(contentsOfFile: dir.path("log"), encoding: .utf8) == "ev-crash 2\n")
    }

    @Test func timedOutHookIsRetriedThenDeadLettered() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let hook = HookSpec(exec: ["./sleep_forever.sh", dir.url.path], timeout: .milliseconds(200))
        let queue = QueueFactory.make()
        let id = queue.enqueue(Hooks.event(), hooks: [hook])[0]
        let worker = worker(queue, hooks: [hook], retry: Hooks.fastRetry(attempts: 2))
        #expect(try worker.runUntilSettled(timeout: .seconds(20)))
        let row = try #require(queue.row(id))
        #expect(row.status == .dead)
        #expect(row.lastError?.hasPrefix("attempt 2/2: timed out; killed by signal 15") == true)
    }

    /// More held-back heads than one read returns (a hook waiting for the network across many
    /// fences) do not hide a ready delivery behind them.
    @Test func manyHeldBackDeliveriesDoNotStarveAReadyOne() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let out = try TemporaryDirectory()
        defer { out.remove() }
        _ = try root.write("proc/net/route", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n")
        let probe = ConditionProbe(procRoot: root.path("proc"), sysRoot: root.path("sys"))
        let upload = HookSpec(exec: ["./record.sh", out.url.path + "/upload"], when: HookConditions(network: true))
        let local = HookSpec(exec: ["./record.sh", out.url.path])
        let queue = QueueFactory.make()
        for fence in 0..<300 { _ = queue.enqueue(Hooks.event(id: "ev-\(fence)", fence: "f\(fence)"), hooks: [upload]) }
        let id = queue.enqueue(Hooks.event(id: "ev-local", fence: "home"), hooks: [local])[0]
        let worker = worker(queue, hooks: [upload, local], probe: probe)
        _ = try worker.poll(now: WallClock.now())
        #expect(worker.heldBack == 300)
        #expect(worker.runningCount == 1)
        #expect(waitUntil(within: .seconds(10)) {
            _ = try? worker.poll(now: WallClock.now())
            return queue.row(id)?.status == .delivered
        })
    }

    @Test func conditionsHoldDeliveriesBackUntilRouteAndPowerAppear() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let out = try TemporaryDirectory()
        defer { out.remove() }
        // No default route yet (only a LAN route), and mains offline beside a battery.
        _ = try root.write("proc/net/route", """
        Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
        eth0\t0000A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0

        """)
        _ = try root.write("sys/class/power_supply/AC/type", "Mains\n")
        _ = try root.write("sys/class/power_supply/AC/online", "0\n")
        _ = try root.write("sys/class/power_supply/BAT0/type", "Battery\n")
        let probe = ConditionProbe(procRoot: root.path("proc"), sysRoot: root.path("sys"))
        let conditional = HookSpec(exec: ["./record.sh", out.url.path], when: HookConditions(network: true, externalPower: true))
        let queue = QueueFactory.make()
        let id = queue.enqueue(Hooks.event(), hooks: [conditional])[0]
        let worker = worker(queue, hooks: [conditional], probe: probe)

        let clock = WallClock.now
        var wake = try worker.poll(now: clock())
        #expect(worker.heldBack == 1)
        #expect(worker.runningCount == 0)
        #expect(wake != nil, "held-back deliveries recheck on a timer")

        // The network appears; power still missing: still held.
        _ = try root.write("proc/net/route", """
        Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
        eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0

        """)
        wake = try worker.poll(now: clock())
        #expect(worker.heldBack == 1 && worker.runningCount == 0)
        #expect(queue.row(id)?.status == .pending)

        // Mains comes online: delivered.
        _ = try root.write("sys/class/power_supply/AC/online", "1\n")
        #expect(try worker.runUntilSettled(timeout: .seconds(20)))
        #expect(queue.row(id)?.status == .delivered)
        #expect(FileManager.default.fileExists(atPath: out.path("stdin")))
    }
}
