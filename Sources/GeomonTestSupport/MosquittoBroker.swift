import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why the broker harness could not start.
public struct MosquittoError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { "mosquitto: \(message)" }
}

/// A private mosquitto broker on free loopback ports, everything in a temporary directory:
/// a password file (users `geomon`/`s3cret` and `recorder`/`r3corder`), anonymous access off,
/// persistence in the directory (a subscriber's session survives `restart()`; `persistence:
/// false` loses sessions and retained messages as a broker restarted without it does), an
/// optional ACL (`acl`: mosquitto's `acl_file` text), and with `tls` a second listener with a
/// certificate from a CA the harness makes with `openssl`.
/// `stop()` (and `deinit`) kill it; nothing outlives the test.
public final class MosquittoBroker: @unchecked Sendable {
    public static let mosquitto = "/usr/sbin/mosquitto"
    public static let tools = ["/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_passwd", "/usr/bin/openssl"]

    public static var isAvailable: Bool {
        ([mosquitto] + tools).allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// On CI the broker tests must run (and fail when mosquitto is missing).
    public static var shouldRun: Bool {
        isAvailable || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    public let directory: TemporaryDirectory
    public let port: UInt16
    public let tlsPort: UInt16?
    /// The CA that signed the TLS listener's certificate (with `tls`).
    public var caFile: String { directory.path("ca.crt") }
    private var process: SpawnedProcess?
    private let lock = NSLock()

    /// - Parameter config: more lines for the broker's configuration (`max_packet_size 2000`).
    public init(tls: Bool = false, persistence: Bool = true, acl: String? = nil, config extra: String = "") throws {
        guard Self.isAvailable else { throw MosquittoError(message: "not installed (apt-get install mosquitto mosquitto-clients openssl)") }
        directory = try TemporaryDirectory(prefix: "geomon-mqtt")
        port = try GPSFakeHarness.freePort()
        tlsPort = tls ? try GPSFakeHarness.freePort() : nil
        let passwd = directory.path("passwd")
        try Self.run("/usr/bin/mosquitto_passwd", ["-c", "-b", passwd, "geomon", "s3cret"])
        try Self.run("/usr/bin/mosquitto_passwd", ["-b", passwd, "recorder", "r3corder"])
        var config = getuid() == 0 ? "user root\n" : ""
        config += """
            per_listener_settings false
            allow_anonymous false
            password_file \(passwd)
            persistence \(persistence)
            persistence_location \(directory.path(""))
            autosave_interval 1
            log_dest file \(directory.path("broker.log"))
            log_type all
            listener \(port) 127.0.0.1

            """
        config += extra.isEmpty || extra.hasSuffix("\n") ? extra : extra + "\n"
        if let acl {
            config += "acl_file \(try directory.write("acl", acl))\n"
        }
        if let tlsPort {
            try Self.makeCertificates(in: directory)
            config += """
                listener \(tlsPort) 127.0.0.1
                cafile \(caFile)
                certfile \(directory.path("server.crt"))
                keyfile \(directory.path("server.key"))

                """
        }
        _ = try directory.write("mosquitto.conf", config)
        try start()
    }

    deinit {
        stop()
        directory.remove()
    }

    /// Starts the broker (again) on the same ports and waits until it accepts.
    public func start() throws {
        lock.lock()
        defer { lock.unlock() }
        guard process == nil else { return }
        // `timeout`: nothing outlives a crashed test run by more than 15 minutes.
        let process = try SpawnedProcess(["/usr/bin/timeout", "-s", "KILL", "900", Self.mosquitto, "-c", directory.path("mosquitto.conf")])
        self.process = process
        let deadline = ContinuousClock.now + .seconds(10)
        while !GPSFakeHarness.accepts(port: port) || !(tlsPort.map(GPSFakeHarness.accepts) ?? true) {
            if !process.isRunning || ContinuousClock.now > deadline {
                throw MosquittoError(message: "did not start listening on 127.0.0.1:\(port): \(log.suffix(600))")
            }
            usleep(20_000)
        }
    }

    /// Stops the broker (SIGTERM: it saves its persistence file) and waits until the port is free.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard let process else { return }
        self.process = nil
        process.stop(signal: SIGTERM)
        let deadline = ContinuousClock.now + .seconds(5)
        while GPSFakeHarness.accepts(port: port), ContinuousClock.now < deadline { usleep(20_000) }
    }

    public var log: String {
        (try? String(contentsOfFile: directory.path("broker.log"), encoding: .utf8)) ?? ""
    }

    /// A subscriber recording every message on `topic` (with a persistent session, QoS 1).
    public func subscribe(_ topic: String = "#", id: String = "geomon-test-recorder") throws -> MQTTRecorder {
        try MQTTRecorder(port: port, topic: topic, id: id, file: directory.path("recorded-\(id).txt"))
    }

    /// The message retained on `topic` now, if any (a fresh subscriber's first message).
    public func retained(_ topic: String) throws -> String? {
        // `timeout`, not mosquitto_sub's -W: its alarm signal may be blocked in a test runner.
        let result = try runProcess(URL(fileURLWithPath: "/usr/bin/timeout"),
                                    ["-s", "KILL", "2", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", String(port),
                                     "-u", "recorder", "-P", "r3corder", "-t", topic, "-C", "1", "-F", "%r %p"])
        let line = result.stdout.split(separator: "\n").first.map(String.init)
        guard let line, line.hasPrefix("1 ") else { return nil }
        return String(line.dropFirst(2))
    }

    static func run(_ program: String, _ arguments: [String], in directory: String? = nil) throws {
        let result = try runProcess(URL(fileURLWithPath: program), arguments, currentDirectory: directory.map { URL(fileURLWithPath: $0) })
        guard result.exitCode == 0 else { throw MosquittoError(message: "\(program) \(arguments.joined(separator: " ")) failed: \(result.stderr)") }
    }

    /// A throw-away EC CA and a server certificate for localhost/127.0.0.1 signed by it.
    static func makeCertificates(in dir: TemporaryDirectory) throws {
        let openssl = "/usr/bin/openssl"
        try run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                          "-keyout", "ca.key", "-out", "ca.crt", "-days", "30", "-subj", "/CN=geomon test CA"], in: dir.path(""))
        try run(openssl, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                          "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], in: dir.path(""))
        _ = try dir.write("server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n")
        try run(openssl, ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                          "-out", "server.crt", "-days", "30", "-sha256", "-extfile", "server.ext"], in: dir.path(""))
        // Another CA, which signed nothing the broker presents (the wrong-CA test).
        try run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                          "-keyout", "other-ca.key", "-out", "other-ca.crt", "-days", "30", "-subj", "/CN=another CA"], in: dir.path(""))
    }
}

/// `mosquitto_sub` writing `RECEIVED TOPIC PAYLOAD` lines to a file (the arrival time in Unix
/// seconds), with a persistent session (clean session off, QoS 1), so it misses nothing across a
/// broker restart.
public final class MQTTRecorder: @unchecked Sendable {
    public struct Message: Hashable, Sendable {
        public var topic: String
        public var payload: String
        /// When the recorder received it (Unix seconds, the machine's clock).
        public var receivedAt: Double
    }

    private let process: SpawnedProcess
    private let file: String

    init(port: UInt16, topic: String, id: String, file: String) throws {
        self.file = file
        process = try SpawnedProcess(["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", String(port), "-u", "recorder", "-P", "r3corder",
                                      "-q", "1", "-c", "-i", id, "-t", topic, "-F", "%U %t %p"], stdout: file)
        // Subscribed once connected; a short wait is enough on loopback.
        usleep(300_000)
    }

    deinit { stop() }

    public func stop() {
        process.stop(signal: SIGKILL)
    }

    /// Every message recorded so far, in arrival order.
    public var messages: [Message] {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let received = Double(parts[0]) else { return nil }
            return Message(topic: String(parts[1]), payload: String(parts[2]), receivedAt: received)
        }
    }

    /// Waits until `condition` holds for the recorded messages (at most `timeout`).
    @discardableResult
    public func wait(timeout: Duration = .seconds(10), until condition: ([Message]) -> Bool) -> [Message] {
        let deadline = ContinuousClock.now + timeout
        var current = messages
        while !condition(current), ContinuousClock.now < deadline {
            usleep(50_000)
            current = messages
        }
        return current
    }
}
