import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for ModemManager on a private D-Bus system bus in a temporary directory (no
/// modem can run in the tests): `dbus-daemon` with the test's bus configuration and
/// `Tests/Fixtures/modemmanager/mm-standin.py`, one modem whose `Location.Setup` calls are
/// recorded (`setupCalls`). `stop()` (and `deinit`) end both processes.
public final class ModemManagerStandIn: @unchecked Sendable {
    public static let tools = ["/usr/bin/dbus-daemon", "/usr/bin/python3"]

    /// Whether the stand-in can run: dbus-daemon, and python3 with its dbus and gi modules.
    public static var isAvailable: Bool {
        guard tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) }) else { return false }
        let probe = try? runProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", "import dbus, gi"])
        return probe?.exitCode == 0
    }

    /// On CI the ModemManager tests must run (and fail when something is missing).
    public static var shouldRun: Bool {
        isAvailable || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    public let directory: TemporaryDirectory
    /// The private bus's address.
    public let busAddress: String
    private var bus: SpawnedProcess?
    private var service: SpawnedProcess?

    /// - Parameters:
    ///   - enabled: the modem's `Location.Enabled` at start (17: 3GPP cell ids and unmanaged
    ///     GNSS, as a PinePhone with gpsd reading the modem's NMEA port).
    ///   - setupDelay: how long `Location.Setup` takes to answer (a modem that hangs); the call
    ///     is recorded when it arrives.
    public init(enabled: UInt32 = 17, setupDelay: Duration = .zero) throws {
        guard Self.isAvailable else {
            throw MosquittoError(message: "the ModemManager stand-in needs dbus-daemon and python3-dbus, python3-gi (apt-get install dbus python3-dbus python3-gi)")
        }
        let directory = try TemporaryDirectory(prefix: "geomon-mm")
        self.directory = directory
        let run = String(directory.path("").dropLast(directory.path("").hasSuffix("/") ? 1 : 0))
        busAddress = "unix:path=\(directory.path("system_bus_socket"))"
        let fixtures = TestSupport.fixture("modemmanager")
        let busConfig = try String(contentsOf: fixtures.appendingPathComponent("system-bus.conf.in"), encoding: .utf8)
            .replacingOccurrences(of: "@RUNDIR@", with: run)
        _ = try directory.write("bus.conf", busConfig)
        self.enabled = enabled
        self.setupDelay = setupDelay
        try startBusAndService()
    }

    private let enabled: UInt32
    private let setupDelay: Duration

    private func startBusAndService() throws {
        let fixtures = TestSupport.fixture("modemmanager")
        bus = try SpawnedProcess(["/usr/bin/dbus-daemon", "--config-file=\(directory.path("bus.conf"))", "--nofork", "--print-address=1"],
                                 stdout: directory.path("bus.addr"))
        try Self.wait("the private system bus") { (try? String(contentsOfFile: self.directory.path("bus.addr"), encoding: .utf8))?.isEmpty == false }
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress
        unlink(directory.path("standin.log"))
        service = try SpawnedProcess(["/usr/bin/python3", fixtures.appendingPathComponent("mm-standin.py").path, directory.path("setup.jsonl"), "\(enabled)", "\(Double(setupDelay.components.seconds) + Double(setupDelay.components.attoseconds) / 1e18)"],
                                     stdout: directory.path("standin.log"), stderrToStdout: true, environment: env)
        try Self.wait("the ModemManager stand-in") {
            (try? String(contentsOfFile: self.directory.path("standin.log"), encoding: .utf8))?.contains("ready") == true
        }
    }

    /// The system bus restarts (and ModemManager with it, as it does on a real one): every
    /// connection to it ends.
    public func restartBus() throws {
        for process in [service, bus] { process?.stop(signal: SIGKILL) }
        service = nil
        bus = nil
        unlink(directory.path("system_bus_socket"))
        unlink(directory.path("bus.addr"))
        try startBusAndService()
    }

    deinit {
        stop()
        directory.remove()
    }

    /// Every `Location.Setup` call so far: (sources, signal_location).
    public var setupCalls: [(sources: UInt32, signals: Bool)] {
        guard let text = try? String(contentsOfFile: directory.path("setup.jsonl"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let sources = object["sources"] as? Int, let signals = object["signal_location"] as? Bool else { return nil }
            return (UInt32(sources), signals)
        }
    }

    /// The stand-in's own output (for a failing test's message).
    public var log: String { (try? String(contentsOfFile: directory.path("standin.log"), encoding: .utf8)) ?? "" }

    public func stop() {
        for process in [service, bus] { process?.stop(signal: SIGTERM, grace: .seconds(2)) }
        service = nil
        bus = nil
    }

    private static func wait(_ what: String, timeout: Duration = .seconds(10), _ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if ContinuousClock.now > deadline { throw MosquittoError(message: "\(what) did not come up within \(timeout)") }
            usleep(50_000)
        }
    }
}
