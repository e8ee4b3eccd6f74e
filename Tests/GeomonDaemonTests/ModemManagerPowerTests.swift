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
}
