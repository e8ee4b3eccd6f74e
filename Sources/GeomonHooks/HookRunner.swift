import CGeomonShims
import GeomonSystem
import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// Runs hook executables: no shell, clean environment, own session and process group, only
/// fds 0–2, bounded output, timeout with SIGTERM → grace → SIGKILL to the whole group, and the
/// rest of the group killed as soon as the leader exits.
///
/// `run(_:)` blocks the calling thread, sleeping in `poll(2)` on the output pipes and a pidfd;
/// `start(_:completion:)` runs it on a dedicated thread so a loop can run several at once.
public struct HookRunner: Sendable {
    public var limits: HookLimits
    /// Ends every hook this runner (and its copies) is running: `stopAll()`.
    private let stopper = HookStopper()

    public init(limits: HookLimits = HookLimits()) {
        self.limits = limits
    }

    /// Ends the hooks running now and any started later, as their timeout would (SIGTERM to
    /// the group, SIGKILL after `killGrace`): the daemon stops, and a hook left running would
    /// overlap the same delivery run again after the restart.
    public func stopAll() {
        stopper.stop()
    }

    /// Runs the invocation to completion on the calling thread.
    public func run(_ invocation: HookInvocation) -> HookResult {
        let path = HookRunner.resolveExecutable(invocation.argv.first ?? "", directory: invocation.workingDirectory)
        guard !invocation.argv.isEmpty, !(invocation.argv.first ?? "").isEmpty else {
            return HookResult(termination: .spawnFailed(errno: EINVAL, message: "empty exec"), executablePath: path)
        }
        var child = ChildIO(limit: limits.outputLimitBytes)
        defer { child.closeAll() }
        if let failure = child.open(stdin: invocation.stdin) {
            return HookResult(termination: .spawnFailed(errno: failure, message: errnoText(failure)), executablePath: path)
        }

        let envp = invocation.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let started = ContinuousClock.now
        let process: ChildProcess
        do {
            process = try ChildProcess(path: path, argv: invocation.argv, environment: envp, workingDirectory: invocation.workingDirectory,
                                       stdin: child.stdinFD, stdout: child.stdoutWrite, stderr: child.stderrWrite)
        } catch {
            child.closeChildEnds()
            return HookResult(termination: .spawnFailed(errno: error.errno, message: error.message), executablePath: path)
        }
        child.closeChildEnds()
        return supervise(process, child: &child, timeout: invocation.timeout, started: started, path: path)
    }

    /// Runs the invocation on a new thread and calls `completion` there when it has ended.
    public func start(_ invocation: HookInvocation, completion: @escaping @Sendable (HookResult) -> Void) {
        let runner = self
        startThread(named: "geomon-hook") {
            completion(runner.run(invocation))
        }
    }

    /// Runs the invocation on a dedicated thread (never blocking a concurrency pool thread).
    public func runOnThread(_ invocation: HookInvocation) async -> HookResult {
        await withCheckedContinuation { continuation in
            start(invocation) { continuation.resume(returning: $0) }
        }
    }

    /// `argv[0]` → the path given to exec: absolute stays; a relative path containing `/`
    /// resolves against `directory`; a bare name is looked up in `directory` first, then in
    /// the hook PATH (`/usr/local/bin:/usr/bin:/bin`).
    public static func resolveExecutable(_ name: String, directory: String) -> String {
        if name.hasPrefix("/") { return name }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        var relative = Substring(name)
        while relative.hasPrefix("./") { relative = relative.dropFirst(2) }
        let local = base.isEmpty ? String(relative) : base + "/" + relative
        if name.contains("/") { return local }
        if access(local, F_OK) == 0 { return local }
        for dir in HookEnvironment.hookPath.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return local
    }

    // MARK: - Supervision

    private enum Phase {
        case running(deadline: ContinuousClock.Instant)
        case terminating(killAt: ContinuousClock.Instant)
        case killed
        case exited(drainUntil: ContinuousClock.Instant)
    }

    private func supervise(_ process: ChildProcess, child: inout ChildIO, timeout: Duration, started: ContinuousClock.Instant, path: String) -> HookResult {
        var phase = Phase.running(deadline: started + timeout)
        var timedOut = false
        var stopped = false
        var endedAt = started

        while true {
            let now = ContinuousClock.now
            // Timers first.
            switch phase {
            case .running(let deadline) where now >= deadline:
                timedOut = true
                process.signalGroup(SIGTERM)
                phase = .terminating(killAt: now + limits.killGrace)
                continue
            case .running where stopper.isStopped:
                stopped = true
                process.signalGroup(SIGTERM)
                phase = .terminating(killAt: now + limits.killGrace)
                continue
            case .terminating(let killAt) where now >= killAt:
                process.signalGroup(SIGKILL)
                phase = .killed
                continue
            case .exited(let drainUntil) where now >= drainUntil || !child.hasOpenOutput:
                var result = makeResult(status: process.status, timedOut: timedOut, duration: endedAt - started, child: child, path: path, pid: process.pid)
                result.stopped = stopped
                result.stderrTail = child.stderrTail
                return result
            default:
                break
            }

            var fds: [pollfd] = []
            if child.stdoutRead >= 0 { fds.append(pollfd(fd: child.stdoutRead, events: Int16(POLLIN), revents: 0)) }
            if child.stderrRead >= 0 { fds.append(pollfd(fd: child.stderrRead, events: Int16(POLLIN), revents: 0)) }
            var leaderRunning = true
            if case .exited = phase { leaderRunning = false }
            if leaderRunning && process.pidfd >= 0 { fds.append(pollfd(fd: process.pidfd, events: Int16(POLLIN), revents: 0)) }
            if case .running = phase { fds.append(pollfd(fd: stopper.fd, events: Int16(POLLIN), revents: 0)) }

            var wait: Duration
            switch phase {
            case .running(let deadline): wait = deadline - now
            case .terminating(let killAt): wait = killAt - now
            case .killed: wait = .seconds(1)
            case .exited(let drainUntil): wait = drainUntil - now
            }
            // Without a pidfd (old kernel), check the leader every 20 ms.
            if leaderRunning && process.pidfd < 0 { wait = min(wait, .milliseconds(20)) }
            let waitMs = Int32(clamping: max(0, wait.wholeMilliseconds) + 1)
            let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), waitMs) }
            if ready < 0 && errno != EINTR && errno != EAGAIN {
                // Should not happen; avoid spinning.
                usleep(10_000)
            }
            for entry in fds where entry.revents != 0 {
                if entry.fd == child.stdoutRead { child.drain(.stdout) }
                else if entry.fd == child.stderrRead { child.drain(.stderr) }
            }
            if leaderRunning, process.reapIfExited() {
                endedAt = ContinuousClock.now
                phase = .exited(drainUntil: endedAt + limits.drainAfterExit)
            }
        }
    }

    private func makeResult(status: Int32?, timedOut: Bool, duration: Duration, child: ChildIO, path: String, pid: pid_t) -> HookResult {
        let termination: HookResult.Termination
        if let status, geomon_wifexited(status) != 0 {
            termination = .exited(geomon_wexitstatus(status))
        } else if let status, geomon_wifsignaled(status) != 0 {
            termination = .signaled(geomon_wtermsig(status))
        } else {
            termination = .exited(-1) // status unknown (reaped by someone else)
        }
        return HookResult(
            termination: termination, timedOut: timedOut, duration: duration,
            stdout: child.stdout, stderr: child.stderr,
            stdoutTruncated: child.stdoutTruncated, stderrTruncated: child.stderrTruncated,
            executablePath: path, pid: pid
        )
    }
}

/// A flag every supervising thread of one runner polls: a pipe whose read end becomes
/// readable, for good, once `stop()` wrote to it.
private final class HookStopper: @unchecked Sendable {
    let fd: Int32
    private let writeFD: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        if geomon_pipe_cloexec(&fds) == 0 {
            _ = geomon_set_nonblocking(fds[0])
            _ = geomon_set_nonblocking(fds[1])
        }
        fd = fds[0]
        writeFD = fds[1]
    }

    deinit {
        if fd >= 0 { close(fd) }
        if writeFD >= 0 { close(writeFD) }
    }

    func stop() {
        var byte: UInt8 = 1
        if writeFD >= 0 { _ = write(writeFD, &byte, 1) }
    }

    var isStopped: Bool {
        guard fd >= 0 else { return false }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }
}

/// The parent's ends of a child's stdio, and what it printed.
private struct ChildIO {
    enum Stream { case stdout, stderr }

    let limit: Int
    var stdinFD: Int32 = -1
    var stdoutRead: Int32 = -1
    var stdoutWrite: Int32 = -1
    var stderrRead: Int32 = -1
    var stderrWrite: Int32 = -1
    var stdout: [UInt8] = []
    var stderr: [UInt8] = []
    var stdoutTruncated = false
    var stderrTruncated = false
    /// The last `tailLimit` bytes of stderr beyond the first `limit`.
    var stderrTail: [UInt8] = []
    let tailLimit: Int

    init(limit: Int, tailLimit: Int = HookLimits.stderrTailBytes) {
        self.limit = max(0, limit)
        self.tailLimit = max(0, tailLimit)
    }

    var hasOpenOutput: Bool { stdoutRead >= 0 || stderrRead >= 0 }

    /// Creates the stdin memfd and the two output pipes; returns an errno on failure.
    mutating func open(stdin bytes: [UInt8]) -> Int32? {
        stdinFD = bytes.withUnsafeBytes { geomon_memfd_with_bytes($0.baseAddress, $0.count) }
        if stdinFD < 0 { return errno }
        var fds: [Int32] = [-1, -1]
        if geomon_pipe_cloexec(&fds) != 0 { return errno }
        stdoutRead = fds[0]; stdoutWrite = fds[1]
        if geomon_pipe_cloexec(&fds) != 0 { return errno }
        stderrRead = fds[0]; stderrWrite = fds[1]
        _ = geomon_set_nonblocking(stdoutRead)
        _ = geomon_set_nonblocking(stderrRead)
        return nil
    }

    mutating func closeChildEnds() {
        closeFD(&stdinFD)
        closeFD(&stdoutWrite)
        closeFD(&stderrWrite)
    }

    mutating func closeAll() {
        closeChildEnds()
        closeFD(&stdoutRead)
        closeFD(&stderrRead)
    }

    /// Reads what is available; keeps up to `limit` bytes, discards the rest; closes on EOF.
    mutating func drain(_ stream: Stream) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let fd = stream == .stdout ? stdoutRead : stderrRead
            guard fd >= 0 else { return }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                let chunk = buffer[0..<count]
                switch stream {
                case .stdout: keep(chunk, into: &stdout, truncated: &stdoutTruncated)
                case .stderr:
                    let room = max(0, limit - stderr.count)
                    keep(chunk, into: &stderr, truncated: &stderrTruncated)
                    if chunk.count > room {
                        // The end of the whole stream: the kept start's end, then what follows.
                        if stderrTail.isEmpty { stderrTail = Array(stderr.suffix(tailLimit)) }
                        stderrTail.append(contentsOf: chunk.dropFirst(room).suffix(tailLimit))
                        if stderrTail.count > tailLimit { stderrTail.removeFirst(stderrTail.count - tailLimit) }
                    }
                }
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            // EOF or a real error: stop reading this stream.
            if stream == .stdout { closeFD(&stdoutRead) } else { closeFD(&stderrRead) }
            return
        }
    }

    private func keep(_ chunk: ArraySlice<UInt8>, into kept: inout [UInt8], truncated: inout Bool) {
        let room = limit - kept.count
        if room >= chunk.count {
            kept.append(contentsOf: chunk)
        } else {
            if room > 0 { kept.append(contentsOf: chunk.prefix(room)) }
            truncated = true
        }
    }

    private func closeFD(_ fd: inout Int32) {
        if fd >= 0 { close(fd) }
        fd = -1
    }
}

/// Calls `body` with a NULL-terminated `char *[]` of copies of `strings`.

func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}
