import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real GeoClue 2.6 on a private D-Bus system bus, everything in a temporary directory:
/// `dbus-daemon` with the test's bus configuration, GeoClue in a private mount namespace with
/// the test's `geoclue.conf` bind-mounted over `/etc/geoclue/geoclue.conf` (the machine's own
/// file is never touched), an NMEA feeder serving a track on GeoClue's `nmea-socket`, a stub
/// of the geolocation web service on 127.0.0.1, and optionally GeoClue's demo agent.
/// `stop()` (and `deinit`) end every process it started.
public final class GeoClueHarness: @unchecked Sendable {
    public static let geoclue = "/usr/libexec/geoclue"
    public static let agentProgram = "/usr/libexec/geoclue-2.0/demos/agent"
    public static let tools = ["/usr/bin/dbus-daemon", "/usr/bin/dbus-send", "/usr/bin/unshare", "/usr/bin/python3", geoclue, agentProgram]

    public static var isAvailable: Bool {
        tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } && getuid() == 0
    }

    /// On CI the GeoClue tests must run (and fail when something is missing).
    public static var shouldRun: Bool {
        isAvailable || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    public let directory: TemporaryDirectory
    /// `DBUS_SYSTEM_BUS_ADDRESS` of the private bus.
    public let busAddress: String
    private var bus: SpawnedProcess?
    private var feeder: SpawnedProcess?
    private var stub: SpawnedProcess?
    private var service: SpawnedProcess?
    private var agent: SpawnedProcess?
    private var config = ""

    /// - Parameters:
    ///   - track: JSON lines of `{"lat","lon"}` the NMEA feeder serves (exact level).
    ///   - answer: what the web-service stub answers (city level); `setAnswer` changes it.
    ///   - scramble: `[wifi] enable=true`: GeoClue shifts city-level answers by 1–2 km.
    public init(track: String? = nil, answer: (lat: Double, lon: Double, accuracy: Double) = (46.0569, 14.5058, 5000), scramble: Bool = false) throws {
        guard Self.isAvailable else {
            throw MosquittoError(message: "GeoClue tests need root, dbus, geoclue-2.0 and geoclue-2-demo (apt-get install dbus geoclue-2.0 geoclue-2-demo)")
        }
        let directory = try TemporaryDirectory(prefix: "geomon-geoclue")
        self.directory = directory
        let run = directory.path("")
        busAddress = "unix:path=\(directory.path("system_bus_socket"))"
        let fixtures = TestSupport.fixture("geoclue")
        let busConfig = try String(contentsOf: fixtures.appendingPathComponent("system-bus.conf.in"), encoding: .utf8)
            .replacingOccurrences(of: "@RUNDIR@", with: run.hasSuffix("/") ? String(run.dropLast()) : run)
        _ = try directory.write("bus.conf", busConfig)
        bus = try SpawnedProcess(["/usr/bin/dbus-daemon", "--config-file=\(directory.path("bus.conf"))", "--nofork", "--print-address=1"],
                                 stdout: directory.path("bus.addr"))
        try Self.wait("the private system bus") { (try? String(contentsOfFile: directory.path("bus.addr"), encoding: .utf8))?.isEmpty == false }

        let trackFile = try track ?? directory.write("empty.jsonl", "")
        feeder = try SpawnedProcess(["/usr/bin/python3", fixtures.appendingPathComponent("nmea-feeder.py").path, directory.path("nmea.sock"), trackFile],
                                    stdout: directory.path("feeder.log"), stderrToStdout: true)
        try setAnswer(lat: answer.lat, lon: answer.lon, accuracy: answer.accuracy)
        stub = try SpawnedProcess(["/usr/bin/python3", fixtures.appendingPathComponent("geolocate-stub.py").path, directory.path("stub.port"), directory.path("answer.json")],
                                  stdout: directory.path("stub.log"), stderrToStdout: true)
        try Self.wait("the NMEA feeder") { FileManager.default.fileExists(atPath: directory.path("nmea.sock")) }
        try Self.wait("the web-service stub") { FileManager.default.fileExists(atPath: directory.path("stub.port")) }
        let port = try String(contentsOfFile: directory.path("stub.port"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let conf = try String(contentsOf: fixtures.appendingPathComponent("geoclue.conf.in"), encoding: .utf8)
            .replacingOccurrences(of: "@RUNDIR@", with: run.hasSuffix("/") ? String(run.dropLast()) : run)
            .replacingOccurrences(of: "@PORT@", with: port)
            .replacingOccurrences(of: "@WIFI@", with: scramble ? "true" : "false")
        config = try directory.write("geoclue.conf", conf)
        try startGeoClue()
    }

    deinit {
        stop()
        directory.remove()
    }

    /// The environment a client of the private bus needs.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = busAddress
        env.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        return env
    }

    /// What the web-service stub answers from now on (GeoClue caches an answer per process:
    /// a new one needs `restartGeoClue()`).
    public func setAnswer(lat: Double, lon: Double, accuracy: Double) throws {
        let tmp = directory.path("answer.json.tmp")
        try Data("{\"lat\":\(lat),\"lng\":\(lon),\"accuracy\":\(accuracy)}".utf8).write(to: URL(fileURLWithPath: tmp))
        rename(tmp, directory.path("answer.json"))
    }

    /// Starts GeoClue (idle timeout off) and waits until it owns its bus name.
    public func startGeoClue() throws {
        guard service == nil else { return }
        var env = environment
        env["G_MESSAGES_DEBUG"] = "all"
        env["GIO_USE_NETWORK_MONITOR"] = "base"
        let script = "mount --bind \"$0\" /etc/geoclue/geoclue.conf || exit 99; exec \(Self.geoclue) \"$@\""
        service = try SpawnedProcess(["/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c", script, config, "--timeout=0"],
                                     stdout: directory.path("geoclue.log"), stderrToStdout: true, environment: env)
        try Self.wait("GeoClue on the private bus") { self.hasOwner() }
    }

    /// Kills GeoClue (as a crash would) and waits until its name is gone.
    public func killGeoClue() {
        service?.stop(signal: SIGKILL)
        service = nil
        let deadline = ContinuousClock.now + .seconds(5)
        while hasOwner(), ContinuousClock.now < deadline { usleep(50_000) }
    }

    /// Kills the bus, as a crash of dbus-daemon would (GeoClue and the agent die with it),
    /// and starts the bus and GeoClue again at the same address.
    public func restartBus() throws {
        for process in [agent, service, bus] { process?.stop(signal: SIGKILL) }
        agent = nil
        service = nil
        bus = nil
        unlink(directory.path("system_bus_socket"))
        unlink(directory.path("bus.addr"))
        bus = try SpawnedProcess(["/usr/bin/dbus-daemon", "--config-file=\(directory.path("bus.conf"))", "--nofork", "--print-address=1"],
                                 stdout: directory.path("bus.addr"))
        try Self.wait("the private system bus") { (try? String(contentsOfFile: self.directory.path("bus.addr"), encoding: .utf8))?.isEmpty == false }
        try startGeoClue()
    }

    public func restartGeoClue() throws {
        killGeoClue()
        try startGeoClue()
    }

    /// Starts GeoClue's demo agent (for this user) and waits until GeoClue has it.
    public func startAgent() throws {
        guard agent == nil else { return }
        var env = environment
        env.removeValue(forKey: "DISPLAY")
        agent = try SpawnedProcess([Self.agentProgram], stdout: directory.path("agent.log"), stderrToStdout: true, environment: env)
        try Self.wait("GeoClue's demo agent") { self.geoclueLog.contains("New agent for user ID") }
    }

    public var geoclueLog: String { (try? String(contentsOfFile: directory.path("geoclue.log"), encoding: .utf8)) ?? "" }
    public var feederLog: String { (try? String(contentsOfFile: directory.path("feeder.log"), encoding: .utf8)) ?? "" }
    public var stubLog: String { (try? String(contentsOfFile: directory.path("stub.log"), encoding: .utf8)) ?? "" }

    public func stop() {
        for process in [agent, service, stub, feeder, bus] { process?.stop(signal: SIGTERM, grace: .seconds(2)) }
        agent = nil
        service = nil
        stub = nil
        feeder = nil
        bus = nil
    }

    private func hasOwner() -> Bool {
        let result = try? runProcess(URL(fileURLWithPath: "/usr/bin/dbus-send"),
                                     ["--system", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                      "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.GeoClue2"], environment: environment)
        return result?.stdout.contains("boolean true") ?? false
    }

    private static func wait(_ what: String, timeout: Duration = .seconds(10), _ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            if ContinuousClock.now > deadline { throw MosquittoError(message: "\(what) did not come up within \(timeout)") }
            usleep(50_000)
        }
    }
}
