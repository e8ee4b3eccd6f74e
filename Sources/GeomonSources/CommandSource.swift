public import GeomonCore
import Foundation
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
/// it again at `nextStart(after:)` — nothing here sleeps. Its stderr goes to ours (the journal).
public final class CommandSource {
    public enum Event: Sendable, Equatable {
        case fix(Fix)
        /// The program ended: its exit status, or the signal that killed it (negative).
        case exited(status: Int32)
    }

    /// The program and its arguments; `arguments[0]` is a path or a name looked up in `PATH`.
    public let arguments: [String]
    /// How long after an exit to start the program again.
    public let restartInterval: Duration
    /// Lines that were not a valid fix, over all runs.
    public var malformedLines: Int { totalMalformed + parser.skipped.values.reduce(0, +) }
    /// The last malformed line's problem, as `line N: reason`.
    public private(set) var lastError: String?
    /// How often the program was started.
    public private(set) var starts = 0

    private var process: Process?
    private var readHandle: FileHandle?
    private var parser = JSONLinesParser(source: .coarse)
    private var totalMalformed = 0

    public init(arguments: [String], restartInterval: Duration) {
        self.arguments = arguments
        self.restartInterval = restartInterval
    }

    deinit {
        stop()
    }

    public var isRunning: Bool { process != nil }

    /// The process id while running.
    public var processIdentifier: Int32? { process?.processIdentifier }

    /// The read end of the program's stdout while running (non-blocking): wait on it.
    public var fileDescriptor: Int32? { readHandle?.fileDescriptor }

    /// When to start again after an exit seen at `exitedAt`.
    public func nextStart<Instant: InstantProtocol>(after exitedAt: Instant) -> Instant where Instant.Duration == Duration {
        exitedAt.advanced(by: restartInterval)
    }

    /// Starts the program.
    public func start() throws(CommandSourceError) {
        let name = arguments.first ?? ""
        guard process == nil else { throw CommandSourceError(code: .alreadyRunning, command: name, message: "already running") }
        guard let executable = Self.resolve(name) else {
            throw CommandSourceError(code: .notFound, command: name, message: "no such executable (searched PATH)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(arguments.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw CommandSourceError(code: .spawnFailed, command: name, message: "cannot start: \(error)")
        }
        try? pipe.fileHandleForWriting.close()
        let fd = pipe.fileHandleForReading.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.process = process
        self.readHandle = pipe.fileHandleForReading
        parser = JSONLinesParser(source: .coarse)
        starts += 1
    }

    /// Reads what the program printed, without blocking. Returns its fixes, and `.exited` once
    /// its stdout closed and it was reaped.
    public func readAvailable() -> [Event] {
        guard let handle = readHandle else { return [] }
        var events: [Event] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for _ in 0..<16 {
            let n = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if n > 0 {
                events += absorb(parser.feed(Array(buffer[0..<n])))
                continue
            }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK { return events }
            // End of stream (or a read error): the program is done with us.
            events += absorb(parser.finish())
            events.append(.exited(status: reap()))
            return events
        }
        return events
    }

    /// Kills the program's process group (SIGTERM, then SIGKILL after `grace`) and reaps it.
    public func stop(grace: Duration = .seconds(1)) {
        guard let process else { return }
        let pid = process.processIdentifier
        if process.isRunning {
            signalGroup(pid, SIGTERM)
            let deadline = ContinuousClock.now + grace
            while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            if process.isRunning { signalGroup(pid, SIGKILL) }
        }
        _ = reap()
    }

    private func absorb(_ fixes: [Fix]) -> [Event] {
        if let error = parser.lastError { lastError = error }
        return fixes.map { .fix($0) }
    }

    private func signalGroup(_ pid: Int32, _ signal: Int32) {
        if getpgid(pid) == pid { kill(-pid, signal) } else { kill(pid, signal) }
    }

    /// Closes the pipe and waits for the process; SIGTERM if it closed stdout but lives on.
    private func reap() -> Int32 {
        guard let process else { return 0 }
        if process.isRunning {
            let deadline = ContinuousClock.now + .milliseconds(500)
            while process.isRunning, ContinuousClock.now < deadline { usleep(5_000) }
            if process.isRunning { signalGroup(process.processIdentifier, SIGTERM) }
        }
        process.waitUntilExit()
        try? readHandle?.close()
        readHandle = nil
        self.process = nil
        totalMalformed += parser.skipped.values.reduce(0, +)
        parser = JSONLinesParser(source: .coarse)
        let status = process.terminationStatus
        return process.terminationReason == .uncaughtSignal ? -status : status
    }

    /// A path as given, or the first executable of that name in PATH.
    static func resolve(_ name: String) -> String? {
        guard !name.isEmpty else { return nil }
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
