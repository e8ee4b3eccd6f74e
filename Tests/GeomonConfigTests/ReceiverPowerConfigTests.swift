import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// `sources.gnss.power` as the loader reads it.
struct ReceiverPowerConfigTests {
    static func load(_ power: String) -> ProfileLoadResult {
        let text = "version: 1\nname: p\nmode: regions\nsources:\n  gnss:\n    power: \(power)\nfences:\n  - {id: home, circle: {lat: 46, lon: 7, radius: 100m}}\n"
        return ProfileLoader.load(bytes: Array(text.utf8), path: "/tmp/power-probe.yaml")
    }

    @Test func theMethodsAreRead() throws {
        #expect(try #require(Self.load("ubx").profile?.sources.gnss?.power) == .ubx)
        #expect(try #require(Self.load("mtk").profile?.sources.gnss?.power) == .mtk)
        #expect(try #require(Self.load("{method: watch}").profile?.sources.gnss?.power) == .watch)
        let command = try #require(Self.load("{method: command, on: [/bin/true, up], off: [/bin/false]}").profile?.sources.gnss?.power)
        #expect(command == .command(on: ["/bin/true", "up"], off: ["/bin/false"]))
        #expect(try #require(Self.load("modemmanager").profile?.sources.gnss?.power) == .modemmanager(modem: nil))
        let modem = try #require(Self.load("{method: modemmanager, modem: /org/freedesktop/ModemManager1/Modem/3}").profile?.sources.gnss?.power)
        #expect(modem == .modemmanager(modem: "/org/freedesktop/ModemManager1/Modem/3"))
    }

    @Test func withoutTheKeyTheWatchIsTheMethod() throws {
        let text = "version: 1\nname: p\nmode: regions\nsources: {gnss: {}}\nfences:\n  - {id: home, circle: {lat: 46, lon: 7, radius: 100m}}\n"
        let result = ProfileLoader.load(bytes: Array(text.utf8), path: "/tmp/power-probe.yaml")
        #expect(try #require(result.profile?.sources.gnss?.power) == .watch)
    }

    @Test func eachMethodHasARestartClassAndTheProfileMayNameAnother() throws {
        // GNSS stopped with the receiver powered: hot; a command may cut the power: cold.
        for (power, restart) in [("watch", RestartClass.hot), ("ubx", .hot), ("mtk", .hot), ("modemmanager", .hot),
                                 ("{method: command, on: [/bin/true], off: [/bin/true]}", .cold)] {
            let profile = try #require(Self.load(power).profile)
            #expect(profile.sources.gnss?.effectiveRestart == restart, "\(power)")
        }
        let warm = try #require(Self.load("{method: command, on: [/bin/true], off: [/bin/true], restart: warm}").profile)
        #expect(warm.sources.gnss?.effectiveRestart == .warm)
        // The policy and the model plan every wake with the class's time to first fix, and the
        // break-even follows it: 30 s × (120/90 − 1) = 10 s.
        #expect(warm.receiver.ttffHot == .seconds(30))
        let configuration = PowerConfiguration(profile: warm)
        #expect(configuration.ttffHot == .seconds(30))
        #expect(configuration.minOff == .seconds(10))
        #expect(configuration.retryFixTimeout == .seconds(45))
        let cold = try #require(Self.load("{method: command, on: [/bin/true], off: [/bin/true]}").profile)
        #expect(PowerConfiguration(profile: cold).ttffHot == .seconds(35))
        #expect(PowerConfiguration(profile: cold).ttffWarm == .seconds(35))
        #expect(PowerConfiguration(profile: try #require(Self.load("ubx").profile)).ttffHot == .seconds(2))
    }

    @Test func aMeasuredFirstFixNamesTheClassThatCoversIt() {
        let receiver = ReceiverSettings()
        #expect(RestartClass.covering(.milliseconds(1_800), receiver: receiver) == .hot)
        #expect(RestartClass.covering(.seconds(24), receiver: receiver) == .warm)
        #expect(RestartClass.covering(.seconds(41), receiver: receiver) == .cold)
        #expect(RestartClass.cold.isSlower(than: .warm) && !RestartClass.hot.isSlower(than: .hot))
    }

    @Test func aColdStartFasterThanTheWarmOneIsAnError() throws {
        let text = "version: 1\nname: p\nmode: regions\nsources: {gnss: {}}\npolicy:\n  receiver: {ttff_warm: 40s, ttff_cold: 30s}\nfences:\n  - {id: home, circle: {lat: 46, lon: 7, radius: 100m}}\n"
        let result = ProfileLoader.load(bytes: Array(text.utf8), path: "/tmp/power-probe.yaml")
        let error = try #require(result.diagnostics.first { $0.severity == .error }, "\(result.diagnostics)")
        #expect(error.message.contains("'ttff_warm' (40s) must not be greater than 'ttff_cold' (30s)"), "\(error.message)")
        // Without ttff_cold, a long ttff_warm stands for the cold start too.
        let alone = "version: 1\nname: p\nmode: regions\nsources: {gnss: {}}\npolicy:\n  receiver: {ttff_warm: 40s}\nfences:\n  - {id: home, circle: {lat: 46, lon: 7, radius: 100m}}\n"
        let profile = try #require(ProfileLoader.load(bytes: Array(alone.utf8), path: "/tmp/power-probe.yaml").profile)
        #expect(profile.policy.receiver.restarting(.cold).ttffHot == .seconds(40))
    }

    @Test(arguments: [
        ("{method: ubx, restart: lukewarm}", "'hot', 'warm' or 'cold'"),
        ("usb", "'watch', 'ubx', 'mtk', 'modemmanager' or 'command'"),
        ("{method: modemmanager, modem: 0}", "a ModemManager D-Bus object path"),
        ("{method: ubx, modem: /org/freedesktop/ModemManager1/Modem/0}", "'modem' is only for 'method: modemmanager'"),
        ("{method: modemmanager, off: [/bin/true]}", "'off' is only for 'method: command'"),
        ("command", "needs the programs"),
        ("{method: command, on: [/bin/true]}", "needs both 'on' and 'off'"),
        ("{method: ubx, on: [/bin/true]}", "'on' is only for 'method: command'"),
        ("{on: [/bin/true], off: [/bin/true]}", "'power' needs 'method'"),
        ("{method: command, on: /bin/true, off: [/bin/true]}", "'on' must be a list (argv)"),
        ("{method: command, on: [], off: [/bin/true]}", "'on' must name a program"),
        ("{method: command, on: [/nonexistent/geomon-power], off: [/bin/true]}", "/nonexistent/geomon-power"),
    ])
    func badPowerSettingsAreErrorsAtTheirLine(_ power: String, _ message: String) throws {
        let result = Self.load(power)
        let error = try #require(result.diagnostics.first { $0.severity == .error }, "\(result.diagnostics)")
        #expect(error.message.contains(message), "\(error.message)")
        #expect(error.location?.line == 6, "\(error)")
    }
}
