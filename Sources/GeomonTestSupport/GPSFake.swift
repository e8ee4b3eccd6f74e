public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why the gpsfake harness could not start.
public struct GPSFakeError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "gpsfake: \(message)" }
}

/// A real gpsd fed by `gpsfake` with a recorded receiver log, on a free loopback port.
///
/// Runs `/usr/bin/python3 /usr/bin/gpsfake -1 -n -q -W <linger> -c <cycle> -P <port> <log>`
/// (Debian's python, as the data README says) in its own process group, waits until gpsd
/// accepts connections, and `stop()` kills the whole group (gpsfake and its gpsd) with SIGKILL
/// and reaps it. `deinit` stops it too, so no process is ever left behind.
///
/// Under `CI=true` a missing gpsd/gpsfake is a failure: check `GPSFakeHarness.isAvailable`
/// with `GPSFakeHarness.requiredButMissing` in `.enabled(if:)`.
public final class GPSFakeHarness: @unchecked Sendable {
    public static let python = "/usr/bin/python3"
    public static let gpsfake = "/usr/bin/gpsfake"
    public static let gpsd = "/usr/sbin/gpsd"
    /// The longest any gpsfake may live, whatever happens to the test process.
    public static let safetySeconds = 600

    /// True when gpsd, gpsfake and Debian's python are installed.
    public static var isAvailable: Bool {
        [python, gpsfake, gpsd].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// True when tests that need gpsd must run (and fail if it is missing): on CI, or when it
    /// is installed.
    public static var shouldRun: Bool {
        isAvailable || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    public let port: UInt16
    public let log: URL
    private let process: Process
    /// gpsfake's TMPDIR: gpsd's control socket goes there (`gpsfake-PID.sock`), and a SIGKILL
    /// leaves it behind; `stop()` removes the directory.
    private let scratch: TemporaryDirectory
    private let lock = NSLock()
    private var stopped = false

    /// Starts gpsfake on `port` (a free one when nil) and waits until gpsd accepts.
    /// - Parameters:
    ///   - cycleSeconds: delay per sentence (`-c`); 0.05–0.1 is fast and keeps the order.
    ///   - lingerSeconds: gpsfake exits this long after the log ends (`-W`).
    public init(log: URL, port: UInt16? = nil, cycleSeconds: Double = 0.1, lingerSeconds: Int = 3, startTimeout: Duration = .seconds(15)) throws {
        guard Self.isAvailable else {
            throw GPSFakeError(message: "gpsd/gpsfake not installed (apt-get install gpsd gpsd-clients)")
        }
        guard FileManager.default.fileExists(atPath: log.path) else {
            throw GPSFakeError(message: "no such log \(log.path)")
        }
        let chosen = try port ?? Self.freePort()
        self.port = chosen
        self.log = log
        let process = Process()
        // `timeout` makes itself a process-group leader (so stop() reaches gpsfake and its gpsd
        // with one kill) and is a safety net: nothing outlives a crashed test run by more than
        // `safetySeconds`. The python trampoline clears the signal mask the test runner's
        // thread may have blocked; gpsfake's -W linger needs its signals.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        let trampoline = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])"
        process.arguments = ["-s", "KILL", String(Self.safetySeconds), Self.python, "-c", trampoline, Self.python, Self.gpsfake,
                             "-1", "-n", "-q", "-W", String(lingerSeconds), "-c", String(cycleSeconds), "-P", String(chosen), log.path]
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"
        let scratch = try TemporaryDirectory(prefix: "geomon-gpsfake")
        self.scratch = scratch
        environment["TMPDIR"] = scratch.url.path
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        self.process = process
        do { try process.run() } catch {
            scratch.remove()
            throw error
        }
        let deadline = ContinuousClock.now + startTimeout
        while !Self.accepts(port: chosen) {
            if !process.isRunning || ContinuousClock.now > deadline {
                stop()
                throw GPSFakeError(message: "gpsd did not start listening on 127.0.0.1:\(chosen)")
            }
            usleep(20_000)
        }
    }

    deinit {
        stop()
    }

    /// The process id of gpsfake (the process group id of gpsfake and its gpsd).
    public var processIdentifier: Int32 { process.processIdentifier }

    public var isRunning: Bool { process.isRunning }

    /// Kills gpsfake and its gpsd (SIGKILL to the process group) and reaps gpsfake. Idempotent.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        defer { scratch.remove() }
        let pid = process.processIdentifier
        guard pid > 0 else { return }
        if getpgid(pid) == pid { kill(-pid, SIGKILL) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        // gpsd may outlive gpsfake for a moment; wait until nothing listens on the port.
        let deadline = ContinuousClock.now + .seconds(5)
        while Self.accepts(port: port), ContinuousClock.now < deadline { usleep(20_000) }
    }

    /// Waits for gpsfake to exit by itself (after the log and the linger time).
    public func waitForExit(timeout: Duration = .seconds(60)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { usleep(50_000) }
        return !process.isRunning
    }

    /// A loopback TCP port that was free a moment ago.
    public static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw GPSFakeError(message: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw GPSFakeError(message: "bind: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// True when something accepts TCP connections on 127.0.0.1:port.
    public static func accepts(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
