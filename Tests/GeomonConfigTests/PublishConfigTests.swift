import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// `publish.mqtt` and the hooks' `env`/`env_file` as the loader reads them.
struct PublishConfigTests {
    static func load(_ dir: TemporaryDirectory, _ body: String) throws -> ProfileLoadResult {
        let text = "version: 1\nname: van-1\nmode: regions\nsources: {gnss: {plugin: gpsd}}\nfences:\n  - {id: home, circle: {lat: 46, lon: 7, radius: 100m}}\n" + body
        let path = try dir.write("p.yaml", text)
        return ProfileLoader.load(bytes: Array(text.utf8), path: path)
    }

    @Test func aFullMQTTSectionIsReadWithTheSecretFromItsFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("mqtt.secret", "pa ss\nignored second line\n", mode: 0o600)
        _ = try dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\n", mode: 0o644)
        let result = try Self.load(dir, """
            publish:
              mqtt:
                host: broker.lan
                tls: {ca_file: ca.pem}
                username: van-1
                password_file: mqtt.secret
                topic: owntracks/geomon/van-1
                tracker_id: v1
                qos: 0
                locations: all
                keep: {max_pending: 500, max_age: 2d}
                keepalive: 2m

            """)
        #expect(!result.hasErrors, "\(result.diagnostics)")
        let mqtt = try #require(result.profile?.publish.mqtt)
        #expect(mqtt.password == "pa ss" && mqtt.username == "van-1")
        #expect(mqtt.effectivePort == 8883 && mqtt.tls?.caFile == dir.path("ca.pem"))
        #expect(mqtt.qos == 0 && mqtt.locations == .all && mqtt.maxPending == 500 && mqtt.maxAge == .seconds(172_800) && mqtt.keepalive == .seconds(120))
        #expect(mqtt.effectiveClientID(profile: "van-1") == "geomon-van-1")
    }

    @Test(arguments: [
        ("{host: b, topic: t, tls: {cert_file: c.pem}}", "'cert_file' and 'key_file' go together"),
        ("{host: b, topic: t, password_file: mqtt.secret}", "needs a 'username'"),
        ("{host: b, topic: '$SYS/x'}", "must not start with '$'"),
        ("{host: b, topic: a//b}", "empty level"),
        ("{host: b, topic: t, qos: 3}", "'qos'"),
        ("{host: b, topic: t, keepalive: 1s}", "between 5s and 65535s"),
        ("{host: b, topic: t, locations: some}", "'locations'"),
        ("{topic: t}", "missing required key 'host'"),
    ])
    func badMQTTSettingsAreErrors(_ mqtt: String, _ message: String) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("mqtt.secret", "pw\n", mode: 0o600)
        _ = try dir.write("c.pem", "x", mode: 0o644)
        let result = try Self.load(dir, "publish:\n  mqtt: \(mqtt)\n")
        #expect(result.diagnostics.contains { $0.severity == .error && $0.message.contains(message) }, "\(result.diagnostics)")
    }

    @Test func envAndEnvFileReachTheHookSpecAndBadNamesAreRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("hook.sh", "#!/bin/sh\n", mode: 0o755)
        _ = try dir.write("hook.env", "# the token\nAPI_TOKEN=from-file\nURL = https://example.invalid/x?a=b\n\nSHARED=file\nQUOTED=\"two words\"\n", mode: 0o600)
        let good = try Self.load(dir, "hooks:\n  enter: [{exec: [./hook.sh], env: {SHARED: profile, MODE: test}, env_file: hook.env}]\n")
        #expect(!good.hasErrors, "\(good.diagnostics)")
        #expect(good.profile?.hooks.enter.first?.environment == ["API_TOKEN": "from-file", "URL": "https://example.invalid/x?a=b", "QUOTED": "two words", "SHARED": "profile", "MODE": "test"])

        _ = try dir.write("open.env", "A=1\n", mode: 0o644)
        _ = try dir.write("bad.env", "LD_LIBRARY_PATH=/tmp\nnot a line\n", mode: 0o600)
        let bad = try Self.load(dir, "hooks:\n  enter: [{exec: [./hook.sh], env_file: open.env}]\n  exit: [{exec: [./hook.sh], env_file: bad.env, env: {9X: y}}]\n")
        let messages = bad.diagnostics.filter { $0.severity == .error }.map(\.description)
        #expect(messages.contains { $0.contains("readable by others") })
        #expect(messages.contains { $0.contains("bad.env:1:1") && $0.contains("LD_LIBRARY_PATH") }, "\(messages)")
        #expect(messages.contains { $0.contains("bad.env:2:1") && $0.contains("NAME=value") })
        #expect(messages.contains { $0.contains("'9X' is not a variable name") })
    }
}
