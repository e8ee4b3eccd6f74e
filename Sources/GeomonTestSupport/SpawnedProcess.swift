#if canImport(Glibc)
public import Glibc
#endif

/// A child started with `posix_spawn` in its own process group, with an empty signal mask
/// (a test runner's threads block signals; a child must not inherit that) and stdout to a
/// file. `stop` signals the group and reaps the child with `waitpid` (no Foundation `Process`,
/// whose wait can miss a child killed from a deinit).
public final class SpawnedProcess: @unchecked Sendable {
    public let pid: pid_t
    private var reaped = false

    public init(_ argv: [String], stdout path: String? = nil, stderrToStdout: Bool = false, environment: [String: String]? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, path ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        if stderrToStdout {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGALRM, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        var child: pid_t = 0
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { for arg in cArgs { free(arg) } }
        let cEnv: [UnsafeMutablePointer<CChar>?]? = environment.map { env in env.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for item in cEnv ?? [] { free(item) } }
        let rc = cArgs.withUnsafeBufferPointer { args in
            if let cEnv {
                return cEnv.withUnsafeBufferPointer { env in
                    posix_spawn(&child, argv[0], &actions, &attributes, UnsafeMutablePointer(mutating: args.baseAddress!), UnsafeMutablePointer(mutating: env.baseAddress!))
                }
            }
            return posix_spawn(&child, argv[0], &actions, &attributes, UnsafeMutablePointer(mutating: args.baseAddress!), environ)
        }
        guard rc == 0 else { throw MosquittoError(message: "cannot start \(argv[0]): \(String(cString: strerror(rc)))") }
        pid = child
    }

    deinit { stop(signal: SIGKILL) }

    public var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reaped = true
            return false
        }
        return true
    }

    /// Sends `signal` to the process group, waits up to `grace` for the child, then SIGKILLs.
    public func stop(signal: Int32 = SIGKILL, grace: Duration = .seconds(5)) {
        guard !reaped else { return }
        kill(-pid, signal)
        let deadline = ContinuousClock.now + grace
        while isRunning, ContinuousClock.now < deadline { usleep(10_000) }
        if !reaped {
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            reaped = true
        }
        // Whatever else is left in the group (a child of the child).
        kill(-pid, SIGKILL)
    }
}
