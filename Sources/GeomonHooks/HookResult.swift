/// How a hook run ended.
public struct HookResult: Sendable, Equatable {
    public enum Termination: Sendable, Equatable {
        /// The leader exited with this status.
        case exited(Int32)
        /// The leader was killed by this signal (by us after a timeout, or by someone else).
        case signaled(Int32)
        /// posix_spawn failed: the file is missing, not executable, not a valid binary…
        case spawnFailed(errno: Int32, message: String)
    }

    public var termination: Termination

    /// Stopped by geomon before the hook said it had delivered (exit 0): not a failure of the
    /// hook; the delivery runs again after the restart.
    public var interrupted: Bool { stopped && termination != .exited(0) }
    /// The run exceeded its timeout and its process group was signalled.
    public var timedOut: Bool
    /// The runner was stopped (geomon stopping) and signalled the run's group: cut short by
    /// geomon, not failed by the hook (`interrupted`).
    public var stopped: Bool
    /// Wall time from spawn to the leader's exit (monotonic clock).
    public var duration: Duration
    /// The first `outputLimitBytes` of stdout / stderr.
    public var stdout: [UInt8]
    public var stderr: [UInt8]
    /// True when more output was produced than kept.
    public var stdoutTruncated: Bool
    public var stderrTruncated: Bool
    /// When stderr was truncated: the last bytes of the whole stream (at most
    /// `HookLimits.stderrTailBytes`), where a hook that wrote much says what went wrong.
    public var stderrTail: [UInt8] = []
    /// The resolved executable path that was (or would have been) run.
    public var executablePath: String
    /// The child's pid (also its process group and session id); nil when spawning failed.
    public var pid: Int32?

    public init(
        termination: Termination, timedOut: Bool = false, duration: Duration = .zero,
        stdout: [UInt8] = [], stderr: [UInt8] = [], stdoutTruncated: Bool = false, stderrTruncated: Bool = false,
        executablePath: String = "", pid: Int32? = nil, stopped: Bool = false
    ) {
        self.termination = termination
        self.timedOut = timedOut
        self.stopped = stopped
        self.duration = duration
        self.stdout = stdout
        self.stderr = stderr
        self.stdoutTruncated = stdoutTruncated
        self.stderrTruncated = stderrTruncated
        self.executablePath = executablePath
        self.pid = pid
    }

    /// Exit status 0 within the timeout: the only outcome that counts as delivered.
    public var succeeded: Bool {
        !timedOut && termination == .exited(0)
    }

    /// One line for logs and the dead-letter `last error`: `exit status 3: <last stderr line>`
    /// (the line as `OutputText.line`: escaped, at most 300 bytes).
    public var summary: String {
        var text: String
        switch termination {
        case .exited(let code): text = "exit status \(code)"
        case .signaled(let signal): text = "killed by signal \(signal) (\(signalName(signal)))"
        case .spawnFailed(_, let message): text = "cannot run \(executablePath): \(message)"
        }
        if timedOut { text = "timed out; " + text }
        if !succeeded, let line = OutputText.lastLine(stderrTail.isEmpty ? stderr : stderrTail) {
            text += ": " + line
        }
        return text
    }
}

func signalName(_ signal: Int32) -> String {
    switch signal {
    case 1: "SIGHUP"
    case 2: "SIGINT"
    case 3: "SIGQUIT"
    case 6: "SIGABRT"
    case 9: "SIGKILL"
    case 11: "SIGSEGV"
    case 13: "SIGPIPE"
    case 14: "SIGALRM"
    case 15: "SIGTERM"
    default: "signal \(signal)"
    }
}
