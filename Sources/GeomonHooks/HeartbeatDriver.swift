public import GeomonCore

/// Runs the `hooks.heartbeat` list periodically with a status JSON on stdin.
///
/// Heartbeats are not durable (no store rows, no retries): a failed beat is reported through
/// `onResult` and the next one comes at the next interval. A hook whose previous beat is still
/// running skips the beat. Owned by the loop thread; `poll(now:status:)` returns the next wake.
public final class HeartbeatDriver {
    private let hooks: [HookSpec]
    private let every: Duration
    private let firstDelay: Duration
    private let runner: HookRunner
    private let profileName: String
    private let profileDirectory: String
    private let home: String?
    private var startedAt: UTCTime
    private var lastBeat: UTCTime?
    private let inbox: CompletionInbox<HeartbeatResult>
    private var busy: Set<String> = []

    public struct HeartbeatResult: Sendable {
        public var hookKey: String
        public var time: UTCTime
        public var result: HookResult
    }

    /// Called on the owner's thread with each finished beat.
    public var onResult: ((HeartbeatResult) -> Void)?

    public init(
        settings: HookSettings, profileName: String, profileDirectory: String, startedAt: UTCTime,
        firstDelay: Duration = .seconds(5), runner: HookRunner = HookRunner(), home: String? = nil,
        onActivity: (@Sendable () -> Void)? = nil
    ) {
        self.hooks = settings.heartbeat
        self.every = settings.heartbeatEvery
        self.firstDelay = firstDelay
        self.runner = runner
        self.profileName = profileName
        self.profileDirectory = profileDirectory
        self.home = home
        self.startedAt = startedAt
        self.inbox = CompletionInbox(onActivity: onActivity)
    }

    /// Starts a beat when one is due; returns the next beat time (nil when there are no hooks).
    /// `status` is one JSON object describing the daemon (built by the caller).
    /// `busyElsewhere`: hooks whose beat still runs in a driver this one replaced (a reload):
    /// skipped like its own running ones.
    @discardableResult
    public func poll(now: UTCTime, busyElsewhere: Set<String> = [], status: () -> String) -> UTCTime? {
        drain()
        guard !hooks.isEmpty else { return nil }
        let due = HeartbeatSchedule.nextBeat(lastBeat: lastBeat, startedAt: startedAt, now: now, every: every, firstDelay: firstDelay)
        guard now >= due else { return due }
        lastBeat = now
        let body = status()
        for spec in hooks {
            let key = HookCatalog.key(for: spec)
            guard !busyElsewhere.contains(key), busy.insert(key).inserted else { continue }
            var env = HookEnvironment.base(home: home, extra: spec.environment)
            env["GEOMON_EVENT"] = "heartbeat"
            env["GEOMON_EVENT_ID"] = "heartbeat-\(now.millisecondsSince1970)"
            env["GEOMON_TIME"] = now.rfc3339
            env["GEOMON_PROFILE"] = profileName
            env["GEOMON_ATTEMPT"] = "1"
            let invocation = HookInvocation(
                argv: spec.exec, environment: env, stdin: Array((body.hasSuffix("\n") ? body : body + "\n").utf8),
                workingDirectory: profileDirectory, timeout: spec.timeout
            )
            let inbox = self.inbox
            runner.start(invocation) { result in
                inbox.post(HeartbeatResult(hookKey: key, time: now, result: result))
            }
        }
        return HeartbeatSchedule.nextBeat(lastBeat: lastBeat, startedAt: startedAt, now: now, every: every, firstDelay: firstDelay)
    }

    /// Reports the beats that finished, and starts nothing.
    public func drain() {
        for finished in inbox.takeAll() {
            busy.remove(finished.hookKey)
            onResult?(finished)
        }
    }

    /// Goes on with `previous`'s schedule (a reload): the next beat is due when it would have
    /// been, not `firstDelay` after the reload.
    public func continueSchedule(of previous: HeartbeatDriver) {
        startedAt = previous.startedAt
        lastBeat = previous.lastBeat
    }

    /// The hooks whose beat is running.
    public var busyKeys: Set<String> { busy }

    /// Ends the running beats (SIGTERM to each group, SIGKILL after the grace): geomon stops.
    public func stopBeats() {
        runner.stopAll()
    }

    /// Blocks until a beat finishes or `timeout` passes.
    public func waitForActivity(timeout: Duration) {
        inbox.wait(timeout: timeout)
    }

    /// Beats still running.
    public var runningCount: Int { busy.count }
}
