public import GeomonCore
import CGeomonShims
import GeomonSystem
#if canImport(Glibc)
import Glibc
#endif

/// Why a coarse command could not be started.
public struct CommandSourceError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        case notFound
        case spawnFailed
        case alreadyRunning
    }

    public var code: Code
    public var command: String
    public var message: String

    public var description: String { "coarse command \(command): \(message)" }
}

/// The coarse position plugin (`plugin: command`): runs a program (argv as given, no shell)
/// and reads JSON lines `{"time":"RFC 3339","lat":…,"lon":…,"accuracy_m":…}` from its stdout
/// as fixes with source `.coarse`. Malformed lines are counted (`malformedLines`, `lastError`)
/// and skipped. When the program exits, `readAvailable()` reports `.exited`; the daemon starts
/// it again at `nextStart(after:)` — nothing here sleeps.
///
/// The program is spawned as hooks are (`geomon_spawn`: no shell, its own session and process
/// group, default signal dispositions, only fds 0–2) with a clean environment (`PATH`, `LANG`,
/// `HOME`), stdin `/dev/null` and its stderr on ours (the journal).
public final class CommandSource {
    public enum Event: Sendable, Equatable {
        case fix(Fix)
        /// A motion command's line (`Lines.motion`).
        case motion(MotionWord)
        /// The program ended: its exit status, or the signal that killed it (negative).
        case exited(status: Int32)
    }

    /// What the program prints: fixes (the coarse command) or motion (`sources.motion`'s
    /// command, `MotionLinesParser`).
    public enum Lines: Sendable {
        case fixes
        case motion
    }

    /// The program and its arguments; `arguments[0]` is a path or a name looked up in `PATH`.
    public let arguments: [String]
    public let lines: Lines
    /// How long after an exit to start the program again.
    public let restartInterval: Duration
    /// The environment the program gets.
    public let environment: [String: String]
    /// Lines that were not a valid fix, over all runs.
    public var malformedLines: Int { totalMalformed + skippedNow }
    /// The last malformed line's problem, as `line N: reason`.
    public private(set) var lastError: String?
    /// How often the program was started.
    public private(set) var starts = 0

    private var process: ChildProcess?
    private var readFD: Int32 = -1
    /// Readable when the program printed or ended: an epoll instance over its stdout and its
    /// pidfd (-1 without: then stdout alone, whose end is the program's only sign of ending).
    private var watchFD: Int32 = -1
    private var parser = JSONLinesParser(source: .coarse)
    private var motionParser = MotionLinesParser()
    private var totalMalformed = 0

    private var skippedNow: Int {
        (lines == .fixes ? parser.skipped : motionParser.skipped).values.reduce(0, +)
    }

    /// The PATH a plugin runs with (and its bare name is looked up in).
    public static let path = "/usr/local/bin:/usr/bin:/bin"

    public init(arguments: [String], restartInterval: Duration, home: String? = nil, lines: Lines = .fixes) {
        self.arguments = arguments
        self.lines = lines
        self.restartInterval = restartInterval
        var environment = ["PATH": Self.path, "LANG": "C.UTF-8"]
        if let home { environment["HOME"] = home }
        self.environment = environment
    }

    deinit {
        stop()
    }

    public var isRunning: Bool { process != nil }

    /// The process id while running.
    public var processIdentifier: Int32? { process?.pid }

    /// What to wait on while the program runs: readable when it printed (its stdout is read
    /// without blocking) or when it ended, even if a process it left behind still holds its
    /// stdout open.
    public var fileDescriptor: Int32? {
        guard readFD >= 0 else { return nil }
        return watchFD >= 0 ? watchFD : readFD
    }

    /// When to start again after an exit seen at `exitedAt`.
    public func nextStart<Instant: InstantProtocol>(after exitedAt: Instant) -> Instant where Instant.Duration == Duration {
        exitedAt.advanced(by: restartInterval)
    }

    /// Starts the program.
    public func start() throws(CommandSourceError) {
        let name = arguments.first ?? ""
        guard process == nil else { throw CommandSourceError(code: .alreadyRunning, command: name, message: "already running") }
        guard let executable = Self.resolve(name) else {
            throw CommandSourceError(code: .notFound, command: name, message: "no such executable (searched \(Self.path))")
        }
        var fds: [Int32] = [-1, -1]
        guard geomon_pipe_cloexec(&fds) == 0 else {
            throw CommandSourceError(code: .spawnFailed, command: name, message: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer {
            close(fds[1])
            if null >= 0 { close(null) }
        }
        let envp = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        do {
            process = try ChildProcess(path: executable, argv: arguments, environment: envp, workingDirectory: nil, stdin: null, stdout: fds[1], stderr: 2)
        } catch {
            close(fds[0])
            throw CommandSourceError(code: .spawnFailed, command: name, message: "cannot start: \(error.message)")
        }
        _ = geomon_set_nonblocking(fds[0])
        readFD = fds[0]
        let watched = [readFD, process?.pidfd ?? -1]
        watchFD = watched[1] >= 0 ? geomon_epoll_watching(watched, Int32(watched.count)) : -1
        parser = JSONLinesParser(source: .coarse)
        motionParser = MotionLinesParser()
        starts += 1
    }

    /// Reads what the program printed, without blocking. Returns its fixes, and `.exited` once
    /// its stdout closed or it ended, and it was reaped.
    public func readAvailable() -> [Event] {
        guard readFD >= 0 else { return [] }
        var events: [Event] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var reaped = false
        for _ in 0..<16 {
            let n = buffer.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
            if n > 0 {
                events += absorb(Array(buffer[0..<n]))
                continue
            }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                // Nothing to read: the program may have ended while something it started keeps
                // its stdout open (`sleep 1000 &`). Ended, it is reaped and the rest of its
                // group killed; what it printed was read above, and its end is reported as if
                // its stdout had closed (a process that left its group may hold the pipe).
                if !reaped {
                    guard process?.reapIfExited() == true else { return events }
                    // It may have printed its last line and ended between the read above and
                    // the reap: the pipe is read once more before the end.
                    reaped = true
                    continue
                }
                events += absorb(nil)
                events.append(.exited(status: reap(grace: .zero)))
                return events
            }
            // End of stream (or a read error): the program is done with us.
            events += absorb(nil)
            events.append(.exited(status: reap(grace: .milliseconds(500))))
            return events
        }
        return events
    }

    /// Kills the program's process group (SIGTERM, then SIGKILL after `grace`) and reaps it.
    public func stop(grace: Duration = .seconds(1)) {
        guard let process else { return }
        process.terminate(grace: grace)
        _ = reap(grace: .zero)
    }

    /// What the lines in `bytes` say (nil: the end of the output, a trailing line).
    private func absorb(_ bytes: [UInt8]?) -> [Event] {
        switch lines {
        case .fixes:
            let fixes = bytes.map { parser.feed($0) } ?? parser.finish()
            if let error = parser.lastError { lastError = error }
            return fixes.map { .fix($0) }
        case .motion:
            let said = bytes.map { motionParser.feed($0) } ?? motionParser.finish()
            if let error = motionParser.lastError { lastError = error }
            return said.map { .motion($0) }
        }
    }

    /// Waits at most `grace` for the program to end (SIGTERM to its group when it closed
    /// stdout but lives on, SIGKILL after `grace` more), sleeping on its pidfd; reaps it,
    /// closes the pipe. Its exit code, or minus the signal that ended it.
    private func reap(grace: Duration) -> Int32 {
        guard let process else { return 0 }
        if !process.wait(timeout: grace) { process.terminate(grace: grace) }
        if readFD >= 0 { close(readFD) }
        readFD = -1
        if watchFD >= 0 { close(watchFD) }
        watchFD = -1
        self.process = nil
        totalMalformed += skippedNow
        parser = JSONLinesParser(source: .coarse)
        motionParser = MotionLinesParser()
        return process.exitCode ?? 0
    }

    /// A path as given, or the first executable of that name in `path`.
    static func resolve(_ name: String) -> String? {
        guard !name.isEmpty else { return nil }
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        for dir in Self.path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
