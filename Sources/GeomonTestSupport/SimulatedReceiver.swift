public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A GNSS receiver on a pseudo-terminal (`scripts/receiver-sim.py`) that a real gpsd reads, as
/// a USB or serial receiver would be read: it plays a recorded NMEA log at its recorded pace and
/// obeys (or ignores) the power commands of its kind, writing its own account of being on.
/// The one fake in the power tests: no receiver can run here.
public final class SimulatedReceiver: @unchecked Sendable {
    public struct State: Sendable, Equatable {
        public var mono: Double
        public var on: Bool
        public var why: String
    }

    public let port: UInt16
    public let link: String
    private let stateLog: String
    private let commandLog: String
    /// The part of the log it plays, as NMEA (what a replay of the same drive reads).
    public let excerpt: URL
    private let sim: SpawnedProcess
    private let gpsd: SpawnedProcess

    /// - Parameters:
    ///   - obey: `none`, `ubx` or `mtk`; `ignore`: parse the commands but keep tracking.
    ///   - from, until: the part of the log played (`HH:MM:SS`).
    public init(log: URL, directory: URL, obey: String, ignore: Bool = false, from: String, until: String, ttff: Double = 1) throws {
        link = directory.appendingPathComponent("receiver").path
        stateLog = directory.appendingPathComponent("receiver-states.jsonl").path
        commandLog = directory.appendingPathComponent("receiver-commands.jsonl").path
        excerpt = directory.appendingPathComponent("receiver-played.nmea")
        var argv = ["/usr/bin/python3", TestSupport.packageRoot.appendingPathComponent("scripts/receiver-sim.py").path, log.path,
                    "--link", link, "--from", from, "--until", until, "--obey", obey, "--ttff", String(ttff),
                    "--start-on-signal", "--linger", "2", "--state-log", stateLog, "--commands-log", commandLog, "--excerpt", excerpt.path]
        if ignore { argv.append("--ignore") }
        sim = try SpawnedProcess(argv)
        let linked = ContinuousClock.now + .seconds(10)
        while (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil {
            guard ContinuousClock.now < linked, sim.isRunning else { throw MosquittoError(message: "receiver-sim.py did not create \(link)") }
            usleep(20_000)
        }
        port = try GPSFakeHarness.freePort()
        // -n: gpsd keeps the device open and read without a client, as on a Raspberry Pi.
        gpsd = try SpawnedProcess(["/usr/sbin/gpsd", "-N", "-n", "-S", String(port), link])
        let listening = ContinuousClock.now + .seconds(10)
        while !GPSFakeHarness.accepts(port: port) {
            guard ContinuousClock.now < listening, gpsd.isRunning else { throw MosquittoError(message: "gpsd did not listen on \(port)") }
            usleep(50_000)
        }
    }

    deinit { stop() }

    /// Starts the recording (once the daemon watches).
    public func play() { kill(sim.pid, SIGUSR1) }

    /// Writes `hex` to the receiver through gpsd (`?DEVICE`), as a client of its own would;
    /// returns gpsd's answer.
    public func sendThroughGpsd(hex: String) throws -> String {
        let script = """
            import socket, sys, time
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            s.settimeout(3)
            s.sendall(('?DEVICE={"path":"%s","hexdata":"%s"};\\n' % (sys.argv[2], sys.argv[3])).encode())
            time.sleep(1)
            print(s.recv(65536).decode())
            """
        let result = try runProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, String(port), link, hex])
        return result.stdout
    }

    /// Waits for the recording (and the linger after it) to end.
    public func waitForEnd(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while sim.isRunning, ContinuousClock.now < deadline { usleep(100_000) }
        return !sim.isRunning
    }

    public func stop() {
        sim.stop(signal: SIGTERM, grace: .seconds(3))
        gpsd.stop(signal: SIGTERM, grace: .seconds(3))
    }

    /// The receiver's own account: one entry per change of its engine.
    public func states() -> [State] {
        lines(stateLog).compactMap { object in
            guard let mono = object["mono"] as? Double, let state = object["state"] as? String else { return nil }
            return State(mono: mono, on: state == "on", why: object["why"] as? String ?? "")
        }
    }

    /// The power commands it understood, in order.
    public func commands() -> [String] {
        lines(commandLog).compactMap { $0["command"] as? String }
    }

    /// Seconds its engine was on, by its own account.
    public func onSeconds() -> Double {
        let s = states()
        var total = 0.0
        for (a, b) in zip(s, s.dropFirst()) where a.on { total += b.mono - a.mono }
        return total
    }

    private func lines(_ path: String) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}
