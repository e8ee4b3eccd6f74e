import Foundation
import GeomonCore
import GeomonDaemon
import GeomonGeoClue
import GeomonSources
import GeomonTestSupport
import Testing

/// `sources.gnss.power: modemmanager` against a stand-in `org.freedesktop.ModemManager1` on a
/// private system bus (no modem can run here): the real sd-bus client calls
/// `Modem.Location.Setup`, and the stand-in records each call's arguments.
@Suite(.serialized, .enabled(if: ModemManagerStandIn.shouldRun), .timeLimit(.minutes(3)))
struct ModemManagerPowerTests {
    /// gpsd is not used by this method; the switch's signature takes the feed all methods share.
    let feed = GPSDSource(host: "127.0.0.1", port: "1")

    @Test func offClearsTheGNSSSourcesAndOnRestoresThemKeepingTheRest() throws {
        // 3GPP cell ids (1) + GNSS unmanaged (16) + raw (2), location signals on.
        let mm = try ModemManagerStandIn(enabled: 1 | 16 | 2)
        defer { mm.stop() }
        let power = ReceiverPowerSwitch(method: .modemmanager(modem: nil), device: nil, directory: "/", busAddress: mm.busAddress)
        guard case let .switched(off) = power.set(on: false, feed: feed) else {
            Issue.record("switching off failed: \(power.set(on: false, feed: feed)); \(mm.log)")
            return
        }
        #expect(off.contains("/org/freedesktop/ModemManager1/Modem/0"))
        #expect(power.set(on: true, feed: feed) == .switched("Location.Setup(19, false) on /org/freedesktop/ModemManager1/Modem/0 (enabled was 1)"))
        let calls = mm.setupCalls
        #expect(calls.map(\.sources) == [1, 19], "\(mm.log)")
        #expect(calls.map(\.signals) == [false, false])
    }

    @Test func onStartsTheEngineUnmanagedWhenItWasNeverOnAndAGivenModemIsUsed() throws {
        let mm = try ModemManagerStandIn(enabled: 1)
        defer { mm.stop() }
        let location = ModemManagerLocation(modem: "/org/freedesktop/ModemManager1/Modem/0", busAddress: mm.busAddress)
        #expect(try location.set(on: true).hasPrefix("Location.Setup(17, false)"))
        #expect(try location.set(on: false).hasPrefix("Location.Setup(1, false)"))
        #expect(try location.set(on: true).hasPrefix("Location.Setup(17, false)"))
        #expect(mm.setupCalls.map(\.sources) == [17, 1, 17])
    }

    /// `geomon run` keeps one switch for its life: every switch-on after a switch-off restores
    /// the GNSS sources that off cleared (raw 2 as well as unmanaged 16), not only unmanaged.
    @Test func theDaemonRestoresWhatItsSwitchOffCleared() throws {
        let mm = try ModemManagerStandIn(enabled: 1 | 16 | 2)
        defer { mm.stop() }
        try ReceiverPowerTests.scenario(obey: "none", power: { _ in "modemmanager" }) { profile, receiver, dir in
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = mm.busAddress
            let daemon = try RunCommandTests.Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(receiver.port)",
                                                     "--log-level", "info"], in: dir, environment: environment)
            #expect(daemon.waitForLog("gpsd connected"))
            receiver.play()
            // Until the policy has switched the receiver off and on again at least once.
            let deadline = Date().addingTimeInterval(90)
            waitUntil(within: .seconds(max(0, deadline.timeIntervalSinceNow))) { mm.setupCalls.count >= 3 }
            #expect(daemon.stop() == 0, "\(daemon.stderr)")
            let sources = mm.setupCalls.map(\.sources)
            #expect(sources.count >= 3, "\(daemon.stderr)\n\(mm.log)")
            // On at start (nothing cleared yet: unmanaged added), then off and on alternately.
            let expected = sources.indices.map { $0 % 2 == 0 ? UInt32(1 | 16 | 2) : 1 }
            #expect(sources == expected, "\(mm.log)")
        }
    }

    @Test func aMissingModemOrServiceIsAClearFailure() throws {
        let mm = try ModemManagerStandIn()
        defer { mm.stop() }
        let wrong = ReceiverPowerSwitch(method: .modemmanager(modem: "/org/freedesktop/ModemManager1/Modem/7"), device: nil,
                                        directory: "/", busAddress: mm.busAddress)
        guard case let .failed(why) = wrong.set(on: false, feed: feed) else {
            Issue.record("a modem that does not exist was switched")
            return
        }
        #expect(why.contains("Modem/7"))
        mm.stop()
        let gone = ReceiverPowerSwitch(method: .modemmanager(modem: nil), device: nil, directory: "/", busAddress: mm.busAddress)
        guard case let .failed(reason) = gone.set(on: true, feed: feed) else {
            Issue.record("switched without a bus")
            return
        }
        #expect(reason.contains("D-Bus") || reason.contains("ModemManager"), "\(reason)")
        #expect(mm.setupCalls.isEmpty)
    }

    /// A modem that takes 30 s to answer `Location.Setup` (longer than sd-bus's 25 s call
    /// timeout): the switch fails after 25 s and says so, and meanwhile the loop keeps every
    /// other time — the systemd watchdog fed every half interval, a heartbeat hook every 2 s,
    /// the MQTT connection alive at a 5 s keepalive (a broker drops a client silent for 1.5×).
    @Test(.enabled(if: MosquittoBroker.shouldRun, "mosquitto not installed"))
    func aModemThatDoesNotAnswerHoldsNothingElse() throws {
        let mm = try ModemManagerStandIn(enabled: 1 | 16, setupDelay: .seconds(30))
        defer { mm.stop() }
        let broker = try MosquittoBroker()
        try ReceiverPowerTests.scenario(obey: "none", power: { _ in "modemmanager" }) { profile, receiver, dir in
            let beats = dir.path("beats")
            let beat = try dir.write("beat.sh", "#!/bin/sh\ndate +%s.%N >> '\(beats)'\n", mode: 0o755)
            var text = try String(contentsOfFile: profile, encoding: .utf8)
            text = text.replacingOccurrences(of: "\nhooks:\n", with: "\nhooks:\n  heartbeat: {every: 2s, run: [{exec: [\(beat)]}]}\n")
            text += "\npublish:\n  mqtt: {host: 127.0.0.1, port: \(broker.port), username: geomon, password_file: mqtt.secret, topic: owntracks/geomon/mm, keepalive: 5s}\n"
            try text.write(toFile: profile, atomically: true, encoding: .utf8)
            _ = try dir.write("profiles/mqtt.secret", "s3cret\n", mode: 0o600)
            let watchdog = try DatagramRecorder(path: dir.path("notify.sock"))
            defer { watchdog.stop() }
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = mm.busAddress
            environment["NOTIFY_SOCKET"] = dir.path("notify.sock")
            environment["WATCHDOG_USEC"] = "2000000"
            let daemon = try RunCommandTests.Daemon(["--profile", profile, "--db", dir.path("run.db"), "--gpsd", "127.0.0.1:\(receiver.port)",
                                                     "--log-level", "info"], in: dir, environment: environment)
            #expect(daemon.waitForLog("MQTT connected"), "\(daemon.stderr)")
            receiver.play()
            // The switch-on at start is the first Setup call; the modem answers it after 30 s.
            waitUntil(within: .seconds(30)) { !mm.setupCalls.isEmpty }
            let asked = Date().timeIntervalSince1970
            #expect(!mm.setupCalls.isEmpty, "\(daemon.stderr)\n\(mm.log)")
            #expect(daemon.waitForLog("cannot switch the receiver on", timeout: 40), "\(daemon.stderr)")
            let failed = Date().timeIntervalSince1970
            #expect(daemon.stop(timeout: 20) == 0, "\(daemon.stderr)")
            // sd-bus's timeout, not the modem's answer, ended the switch.
            #expect(failed - asked >= 20, "\(daemon.stderr)")
            #expect(daemon.stderr.contains("Connection timed out") || daemon.stderr.contains("timed out") || daemon.stderr.contains("Timeout"), "\(daemon.stderr)")

            // The watchdog: a ping at least every 2 s (WATCHDOG_USEC) while the modem hung.
            let pings = watchdog.received.filter { $0.text.contains("WATCHDOG=1") }.map(\.at)
            let pingGap = Self.longestGap(pings, from: asked, to: failed)
            #expect(pingGap < 2, "the watchdog went \(pingGap) s without a ping: \(pings.count) pings")
            // The heartbeat hook ran on its 2 s schedule.
            let beatTimes = ((try? String(contentsOfFile: beats, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Double($0) }
            let beatGap = Self.longestGap(beatTimes, from: asked, to: failed)
            #expect(beatGap < 6, "the heartbeat went \(beatGap) s without running: \(beatTimes.count) beats")
            // MQTT stayed connected: connected once, never dropped by the broker for silence.
            #expect(daemon.stderr.components(separatedBy: "MQTT connected").count == 2, "\(daemon.stderr)")
            #expect(!broker.log.contains("exceeded timeout"), "\(broker.log.suffix(2000))")
        }
    }

    /// The system bus restarts while a switch is under way and another waits behind it: the
    /// one under way fails with the connection, and the one asked for goes out on a new one.
    @Test func aSwitchAskedForWhileTheBusRestartsGoesOutOnANewConnection() throws {
        let mm = try ModemManagerStandIn(enabled: 17, setupDelay: .seconds(3))
        defer { mm.stop() }
        let location = ModemManagerLocation(modem: "/org/freedesktop/ModemManager1/Modem/0", busAddress: mm.busAddress)
        location.request(on: false)
        #expect(waitUntil(within: .seconds(10)) {
            _ = location.process()
            return mm.setupCalls.count == 1
        })
        location.request(on: true)
        try mm.restartBus()
        let done = location.settle(until: GeoClueSource.monotonic() + 20_000_000)
        #expect(done.map(\.on) == [false, true], "\(done)")
        let switchedOn = try? done.last?.result.get()
        #expect(switchedOn?.hasPrefix("Location.Setup(") == true, "\(done)\n\(mm.log)")
        #expect(mm.setupCalls.count == 2 && mm.setupCalls.last.map { $0.sources & 16 != 0 } == true, "\(mm.setupCalls)")
    }

    /// A bus that accepts the connection and never answers its handshake (a hung
    /// dbus-daemon): the switch waits, without holding anything, and closing the connection
    /// does not wait for the handshake, which sd-bus would give 90 s of the daemon's loop.
    @Test func closingAConnectionStillInItsHandshakeDoesNotWaitForIt() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("hung-bus")
        let fd = try #require(boundUnixSocket(path, type: Int32(SOCK_STREAM.rawValue)))
        defer { close(fd) }
        try #require(listen(fd, 4) == 0)
        let location = ModemManagerLocation(modem: nil, busAddress: "unix:path=\(path)", callTimeout: .seconds(1))
        location.request(on: true)
        let done = location.settle(until: GeoClueSource.monotonic() + 2_000_000)
        #expect(done.isEmpty && location.isBusy, "\(done)")
        let start = ContinuousClock.now
        location.close()
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    /// The longest time within [from, to] without one of `times`.
    static func longestGap(_ times: [Double], from: Double, to: Double) -> Double {
        let inside = times.filter { $0 > from && $0 < to }.sorted()
        return zip([from] + inside, inside + [to]).map { $1 - $0 }.max() ?? (to - from)
    }
}

/// A unix datagram socket recording what arrives, with the time (the systemd notify socket).
final class DatagramRecorder: @unchecked Sendable {
    struct Datagram { var at: Double; var text: String }
    private let fd: Int32
    private let lock = NSLock()
    private var datagrams: [Datagram] = []
    private var thread: Thread?

    init(path: String) throws {
        guard let fd = boundUnixSocket(path, type: Int32(SOCK_DGRAM.rawValue)) else { throw CocoaError(.fileWriteUnknown) }
        self.fd = fd
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n > 0 else { return }
                let datagram = Datagram(at: Date().timeIntervalSince1970, text: String(decoding: buffer[0..<n], as: UTF8.self))
                lock.withLock { datagrams.append(datagram) }
            }
        }
        thread.start()
        self.thread = thread
    }

    var received: [Datagram] { lock.withLock { datagrams } }

    /// Ends the reader (shutdown wakes its recv) and closes the socket.
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
