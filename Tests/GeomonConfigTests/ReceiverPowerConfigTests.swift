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

    @Test(arguments: [
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
