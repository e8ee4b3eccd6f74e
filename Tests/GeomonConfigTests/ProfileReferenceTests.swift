import Foundation
import GeomonConfig
import GeomonTestSupport
import Testing

/// docs/profile-reference.md (and so geomon-profile(5), generated from it by
/// scripts/profile-man.py) names every key the loader accepts: the loader is asked for each
/// mapping's keys (an unknown key's error lists them), and each must be in the document.
struct ProfileReferenceTests {
    /// A profile with an unknown key `zzz` in the mapping at `path`, and that path's name in
    /// the loader's message.
    static let probes: [(yaml: String, path: String)] = [
        ("zzz: 1\n", ""),
        ("sources: {zzz: 1}\n", "sources"),
        ("sources: {gnss: {zzz: 1}}\n", "sources.gnss"),
        ("sources: {gnss: {power: {method: command, on: [/bin/true], off: [/bin/true], zzz: 1}}}\n", "sources.gnss.power"),
        ("sources: {coarse: {exec: [/bin/true], zzz: 1}}\n", "sources.coarse"),
        ("sources: {coarse: {plugin: geoclue, zzz: 1}}\n", "sources.coarse"),
        ("sources: {motion: {zzz: 1}}\n", "sources.motion"),
        ("sources: {motion: {plugin: command, exec: [/bin/true], zzz: 1}}\n", "sources.motion"),
        ("significant_change: {zzz: 1}\n", "significant_change"),
        ("policy: {zzz: 1}\n", "policy"),
        ("policy: {stationary: {zzz: 1}}\n", "policy.stationary"),
        ("policy: {receiver: {zzz: 1}}\n", "policy.receiver"),
        ("modes: [{name: a, when: {}, zzz: 1}]\n", "modes[0]"),
        ("modes: [{name: a, when: {zzz: 1}}]\n", "modes[0].when"),
        ("transitions: {zzz: 1}\n", "transitions"),
        ("transitions: {confirm: {fixes: 2, zzz: 1}}\n", "transitions.confirm"),
        ("defaults: {zzz: 1}\n", "defaults"),
        ("fences: [{id: a, circle: {lat: 1, lon: 1, radius: 10m}, active: [{from: \"07:00\", to: \"08:00\", zzz: 1}]}]\n", "active"),
        ("fences: [{id: a, circle: {lat: 1, lon: 1, radius: 10m}, approach: {bands: [1km], zzz: 1}}]\n", "approach"),
        ("fences: [{id: a, circle: {lat: 1, lon: 1, radius: 10m}, dwell: {after: 1m, zzz: 1}}]\n", "dwell"),
        ("fences: [{id: a, circle: {lat: 1, lon: 1, radius: 10m}, zzz: 1}]\n", "fence"),
        ("fences: [{id: a, circle: {lat: 1, lon: 1, radius: 10m, zzz: 1}}]\n", "circle"),
        ("hooks: {zzz: 1}\n", "hooks"),
        ("hooks: {enter: [{exec: [/bin/true], zzz: 1}]}\n", "hook"),
        ("hooks: {enter: [{exec: [/bin/true], when: {zzz: 1}}]}\n", "when"),
        ("hooks: {retry: {zzz: 1}}\n", "hooks.retry"),
        ("hooks: {heartbeat: {every: 1m, run: [], zzz: 1}}\n", "hooks.heartbeat"),
        ("publish: {zzz: 1}\n", "publish"),
        ("publish: {mqtt: {host: h, topic: t, zzz: 1}}\n", "publish.mqtt"),
        ("publish: {mqtt: {host: h, topic: t, tls: {zzz: 1}}}\n", "publish.mqtt.tls"),
        ("publish: {mqtt: {host: h, topic: t, keep: {zzz: 1}}}\n", "publish.mqtt.keep"),
        ("storage: {zzz: 1}\n", "storage"),
    ]

    @Test func everyKeyTheLoaderAcceptsIsDocumented() throws {
        let reference = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("docs/profile-reference.md"), encoding: .utf8)
        var checked = 0
        for probe in Self.probes {
            let text = "version: 1\nname: probe\nmode: regions\n" + probe.yaml
            let result = ProfileLoader.load(bytes: Array(text.utf8), path: "/tmp/probe.yaml")
            let message = try #require(result.diagnostics.first { $0.message.contains("unknown key 'zzz'") }?.message, "\(probe.path): \(result.diagnostics)")
            let list = try #require(message.firstMatch(of: /expected one of: ([^)]+)\)/).map { String($0.1) }, "\(message)")
            for key in list.split(separator: ",").map({ String($0).trimmingCharacters(in: CharacterSet.whitespaces) }) {
                let documented = reference.contains("`\(key)`") || reference.contains(".\(key)`") || reference.contains("`\(key).")
                    || reference.contains("`\(key):") || reference.contains(".\(key) ")
                #expect(documented, "'\(probe.path.isEmpty ? key : probe.path + "." + key)' is accepted by the loader but not in docs/profile-reference.md")
                checked += 1
            }
        }
        #expect(checked > 90)
    }
}
