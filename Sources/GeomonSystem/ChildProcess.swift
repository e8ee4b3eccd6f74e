import CGeomonShims
#if canImport(Glibc)
import Glibc
#endif

/// A child process: the one supervisor every program geomon starts goes through (hooks, the
/// coarse and motion commands, the receiver's switch programs). Spawned with `posix_spawn` in
/// a session and process group of its own, with only fds 0–2, no shell; watched through a
/// pidfd (`pidfd_open(2)`), so waiting for it sleeps in `poll(2)` — with a 20 ms check on
/// kernels without pidfds (before 5.3). Its group is signalled only while the leader is
/// running or a zombie not yet reaped, so a reused process group id is never hit.
///
/// Owned by one thread at a time, hence `@unchecked Sendable` (a hook's supervision thread,
/// or the daemon's loop).
public final class ChildProcess: @unchecked Sendable {
    public let pid: Int32
    /// Readable once the leader exited; -1 without pidfd support.
    public let pidfd: Int32
    /// The raw wait status once reaped (`exitCode`); nil while running, and after the leader
    /// was reaped by someone else (`ECHILD`).
    public private(set) var status: Int32?
    /// The leader was reaped (or found reaped by someone else).
    public private(set) var isReaped = false

    /// Why a program did not start: an errno value (ENOENT, EACCES, ENOEXEC, …).
    public struct SpawnError: Error, Sendable {
        public var errno: Int32
        public var message: String { String(cString: strerror(errno)) }
    }

    /// Starts `path` with `argv` and the environment `environment` (`KEY=VALUE`, nothing
    /// inherited), in `workingDirectory` when given, its stdio the descriptors given.
    public init(path: String, argv: [String], environment: [String], workingDirectory: String?,
                stdin: Int32, stdout: Int32, stderr: Int32) throws(SpawnError) {
        var child: pid_t = 0
        let rc = Self.withCStrings(argv) { cArgv in
            Self.withCStrings(environment) { cEnvp in
                geomon_spawn(&child, path, cArgv, cEnvp, workingDirectory, stdin, stdout, stderr)
            }
        }
        guard rc == 0 else { throw SpawnError(errno: rc) }
        pid = child
        pidfd = geomon_pidfd_open(child)
    }

    deinit {
        if pidfd >= 0 { close(pidfd) }
    }

    /// Signals the child's whole process group, while its id cannot have been reused.
    public func signalGroup(_ signal: Int32) {
        guard !isReaped else { return }
        kill(-pid, signal)
    }

    /// Whether the leader exited; when it did, the rest of its group is killed and the leader
    /// reaped (its status in `status`). Never blocks.
    @discardableResult
    public func reapIfExited() -> Bool {
        guard !isReaped else { return true }
        switch geomon_child_exited_nowait(pid) {
        case 1:
            // A zombie: its pid (the group id) cannot be reused yet, so whatever it left
            // behind in its group is killed, then it is reaped.
            kill(-pid, SIGKILL)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            status = raw
            isReaped = true
        case -1:
            // ECHILD: reaped by someone else (SIGCHLD ignored, a stray waitpid(-1)); the group
            // id may be reused now, so it is not signalled again; the status is unknown.
            isReaped = true
        default:
            break
        }
        return isReaped
    }

    /// Waits up to `timeout` for the leader to exit (reaping it); whether it did.
    @discardableResult
    public func wait(timeout: Duration) -> Bool {
        let end = ContinuousClock.now + timeout
        while !reapIfExited() {
            let left = end - ContinuousClock.now
            guard left > .zero else { return false }
            var wait = left
            if pidfd < 0 { wait = min(wait, .milliseconds(20)) }
            var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, pidfd >= 0 ? 1 : 0, Int32(clamping: wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000 + 1))
        }
        return true
    }

    /// Ends the child: SIGTERM to its group, SIGKILL after `grace`, reaped. Returns `status`.
    @discardableResult
    public func terminate(grace: Duration) -> Int32? {
        guard !reapIfExited() else { return status }
        signalGroup(SIGTERM)
        if !wait(timeout: grace) {
            signalGroup(SIGKILL)
            wait(timeout: .seconds(5))
        }
        return status
    }

    /// The exit code, or minus the signal that ended it; nil while unknown.
    public var exitCode: Int32? {
        guard let status else { return nil }
        if geomon_wifexited(status) != 0 { return geomon_wexitstatus(status) }
        if geomon_wifsignaled(status) != 0 { return -geomon_wtermsig(status) }
        return nil
    }

    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { for p in pointers { free(p) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
