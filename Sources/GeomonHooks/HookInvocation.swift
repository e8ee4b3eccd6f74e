/// One run of one hook: what to execute, with which environment and stdin, and for how long.
public struct HookInvocation: Sendable {
    /// argv as written in the profile; never interpreted by a shell.
    public var argv: [String]
    /// The complete environment of the child (see `HookEnvironment`); nothing is inherited.
    public var environment: [String: String]
    /// Bytes the hook reads on stdin (one JSON object and a newline).
    public var stdin: [UInt8]
    /// Working directory of the child, and the base for a relative `argv[0]`.
    public var workingDirectory: String
    /// After this long the process group gets SIGTERM, then SIGKILL after the grace period.
    public var timeout: Duration

    public init(argv: [String], environment: [String: String], stdin: [UInt8], workingDirectory: String, timeout: Duration) {
        self.argv = argv
        self.environment = environment
        self.stdin = stdin
        self.workingDirectory = workingDirectory
        self.timeout = timeout
    }
}

/// Bounds that protect the daemon from a misbehaving hook.
public struct HookLimits: Sendable {
    /// Bytes of stdout (and, separately, of stderr) kept; the rest is read and discarded.
    public var outputLimitBytes: Int = 64 * 1024
    /// Time between SIGTERM and SIGKILL to the process group after a timeout.
    public var killGrace: Duration = .seconds(5)
    /// After the hook's leader exited and its group was killed, how long we keep reading
    /// output pipes still held open by a process that escaped the group (called `setsid`).
    public var drainAfterExit: Duration = .milliseconds(500)
    /// Bytes of stderr kept from its end as well, when it is longer than `outputLimitBytes`:
    /// the last line is what a failure is reported with.
    public static let stderrTailBytes = 4096

    public init(outputLimitBytes: Int = 64 * 1024, killGrace: Duration = .seconds(5), drainAfterExit: Duration = .milliseconds(500)) {
        self.outputLimitBytes = outputLimitBytes
        self.killGrace = killGrace
        self.drainAfterExit = drainAfterExit
    }
}
