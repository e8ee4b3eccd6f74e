import Foundation
import GeomonTestSupport
import Testing

/// `geomon validate` through the built binary: exit codes, stderr text, stdout JSON.
struct ValidateCommandTests {
    static var profiles: String { TestSupport.packageRoot.appendingPathComponent("profiles").path }

    @Test func shippedProfilesAreValid() throws {
        let paths = ["fitness", "social-radar", "geofence-only"].map { "\(Self.profiles)/\($0).yaml" }
        let result = try runGeomon(["validate"] + paths)
        #expect(result.exitCode == 0)
        // social-radar uses GeoClue: on a machine without a D-Bus system bus validate says so
        // (a warning about the machine, not the profile), and nothing else.
        let busMissing = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] == nil
            && !FileManager.default.fileExists(atPath: "/run/dbus/system_bus_socket")
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains(": warning: ") }
        if busMissing {
            #expect(warnings.count == 1 && warnings[0].contains("social-radar.yaml") && warnings[0].contains("needs the D-Bus system bus"), "\(result.stderr)")
        } else {
            #expect(result.stderr == "")
        }
        // Each "ok" is followed by the bounds the profile plans with.
        let bounds = [
            "fitness.yaml": "planned for foot (policy.activity): max_speed 4 m/s, max_acceleration 1 m/s²",
            "geofence-only.yaml": "planned for vehicle (policy.activity; max_speed set): max_speed 36.1 m/s, max_acceleration 1 m/s²",
            "social-radar.yaml": "planned for any (policy.max_speed and max_acceleration): max_speed 30 m/s, max_acceleration 1 m/s²",
        ]
        #expect(result.stdout == paths.map { path in
            let name = String(path.split(separator: "/").last ?? "")
            return "\(path): ok\(path.hasSuffix("social-radar.yaml") && busMissing ? " (1 warning)" : "")\n\(path): \(bounds[name] ?? "?")\n"
        }.joined())
    }

    @Test func invalidProfileExits65WithClangStyleLines() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("bad.yaml", "version: 1\nname: bad\nmode: regions\nsources: {gnss: {}}\nfences:\n  - id: a\n    circle: {lat: 91, lon: 7, radius: -3m}\n")
        let result = try runGeomon(["validate", "bad.yaml"], currentDirectory: dir.url)
        #expect(result.exitCode == 65)
        #expect(result.stdout == "")
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "bad.yaml:7:19: error: 'lat' must be between -90 and 90 degrees (got 91)")
        #expect(lines.dropFirst().first == "    circle: {lat: 91, lon: 7, radius: -3m}")
        #expect(lines.dropFirst(2).first == "                  ^")
        #expect(lines.contains("bad.yaml:7:39: error: 'radius' must be greater than 0 m (got -3m)"))
        #expect(lines.contains("bad.yaml: invalid, 2 errors"))
    }

    /// Lint is `validate`'s: the other commands say in one line that there is some, and where.
    @Test func otherCommandsSummariseTheWarningsInOneLine() throws {
        let profile = TestSupport.fixture("profiles/warnings/lint-swapped-coordinates.yaml").path
        let listed = try runGeomon(["fences", "--profile", profile])
        #expect(listed.exitCode == 0, "\(listed.stderr)")
        #expect(listed.stderr == "geomon: 2 warnings in \(profile): 'geomon validate \(profile)' lists them\n", "\(listed.stderr)")
        let validated = try runGeomon(["validate", profile])
        #expect(validated.stderr.contains("lat and lon swapped?"))
    }

    @Test func warningsAloneStillExitZero() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("w.yaml", "version: 1\nname: w\nmode: regions\nsources: {gnss: {}}\n")
        let result = try runGeomon(["validate", "w.yaml"], currentDirectory: dir.url)
        #expect(result.exitCode == 0)
        #expect(result.stderr.hasPrefix("w.yaml:3:7: warning: mode 'regions' without fences monitors nothing\n"))
        #expect(result.stdout == "w.yaml: ok (1 warning)\nw.yaml: planned for any (policy.max_speed and max_acceleration): max_speed 30 m/s, max_acceleration 1 m/s²\n")
    }

    @Test func theBoundsInEffectAreTheActivitysUnlessTheProfileSetsThem() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let fences = "fences:\n  - {id: a, circle: {lat: 46.5, lon: 6.6, radius: 200m}}\n"
        _ = try dir.write("boat.yaml", "version: 1\nname: b\nmode: regions\nsources: {gnss: {}}\npolicy: {activity: boat}\n" + fences)
        _ = try dir.write("walk.yaml", "version: 1\nname: w\nmode: regions\nsources: {gnss: {}}\npolicy: {activity: foot, max_acceleration: 0.5m/s2}\n" + fences)
        let result = try runGeomon(["validate", "boat.yaml", "walk.yaml"], currentDirectory: dir.url)
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout == """
            boat.yaml: ok
            boat.yaml: planned for boat (policy.activity): max_speed 13 m/s, max_acceleration 0.5 m/s²
            walk.yaml: ok
            walk.yaml: planned for foot (policy.activity; max_acceleration set): max_speed 4 m/s, max_acceleration 0.5 m/s²

            """)
        let listed = try runGeomon(["fences", "--profile", "walk.yaml"], currentDirectory: dir.url)
        #expect(listed.stdout.hasSuffix("1 fence\nplanned for foot (policy.activity; max_acceleration set): max_speed 4 m/s, max_acceleration 0.5 m/s²\n"))
        // An activity geomon does not know: a diagnostic at its place, with the choices.
        _ = try dir.write("bad.yaml", "version: 1\nname: x\nmode: regions\nsources: {gnss: {}}\npolicy: {activity: horse}\n" + fences)
        let bad = try runGeomon(["validate", "bad.yaml"], currentDirectory: dir.url)
        #expect(bad.exitCode == 65)
        #expect(bad.stderr.hasPrefix("bad.yaml:5:20: error: 'activity' must be 'foot', 'bicycle', 'vehicle', 'boat', 'air' or 'any' (got 'horse')"), "\(bad.stderr)")
        #expect(bad.stderr.contains("foot"))
    }

    @Test func jsonFormatPrintsAnArrayOnStdout() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("j.yaml", "version: 1\nname: j\nmode: continous\n")
        let result = try runGeomon(["validate", "--format", "json", "j.yaml", "missing.yaml"], currentDirectory: dir.url)
        #expect(result.exitCode == 66)
        #expect(result.stderr == "")
        let array = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(array.count == 2)
        #expect(array[0]["file"] as? String == "j.yaml")
        #expect(array[0]["line"] as? Int == 3)
        #expect(array[0]["column"] as? Int == 7)
        #expect(array[0]["severity"] as? String == "error")
        #expect(array[0]["message"] as? String == "'mode' must be 'continuous', 'significant-change' or 'regions' (got 'continous'); did you mean 'continuous'?")
        #expect(array[1]["line"] is NSNull)
        #expect((array[1]["message"] as? String)?.hasPrefix("cannot read profile 'missing.yaml'") == true)
    }

    @Test func jsonFormatOfAValidProfileIsAnEmptyArray() throws {
        let result = try runGeomon(["validate", "--format=json", "\(Self.profiles)/fitness.yaml"])
        #expect(result.exitCode == 0)
        #expect(result.stdout == "[]\n")
    }

    @Test func missingFileExits66() throws {
        let result = try runGeomon(["validate", "/nonexistent/profile.yaml"])
        #expect(result.exitCode == 66)
        #expect(result.stderr == "geomon: error: cannot read profile '/nonexistent/profile.yaml': No such file or directory\n")
    }

    /// Every command that takes --profile says a missing or invalid one the same way: the
    /// diagnostics as `validate` prints them, then `geomon: error: …`.
    @Test func everyCommandSaysAProfileErrorTheSameWay() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let bad = try dir.write("bad.yaml", "version: 1\nname: x\nmode: bogus\n")
        let track = TestSupport.fixture("replay/swiss-drive.jsonl").path
        for command in [["run", "--db", dir.path("x.db")], ["fences"], ["replay", track]] {
            let missing = try runGeomon([command[0], "--profile", "/nonexistent/profile.yaml"] + command.dropFirst())
            #expect(missing.exitCode == 66 && missing.stderr == "geomon: error: cannot read profile '/nonexistent/profile.yaml': No such file or directory\n",
                    "\(command[0]): \(missing.stderr)")
            let invalid = try runGeomon([command[0], "--profile", bad] + command.dropFirst())
            #expect(invalid.exitCode == 65 && invalid.stderr.hasPrefix("\(bad):3:7: error: 'mode' must be")
                    && invalid.stderr.hasSuffix("\ngeomon: error: invalid profile (1 error; run 'geomon validate \(bad)')\n"), "\(command[0]): \(invalid.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("x.db")))
    }

    @Test func directoryIsUnreadableInput() throws {
        let result = try runGeomon(["validate", Self.profiles])
        #expect(result.exitCode == 66)
        #expect(result.stderr.contains("is a directory"))
    }

    @Test(arguments: [["validate"], ["validate", "--format", "xml", "x.yaml"], ["validate", "--lenient", "x.yaml"]])
    func usageErrorsExit64(_ arguments: [String]) throws {
        let result = try runGeomon(arguments)
        #expect(result.exitCode == 64)
        #expect(result.stderr.hasPrefix("geomon validate: error: "))
        #expect(result.stderr.contains("usage: geomon validate PROFILE"))
    }

    @Test func hostileInputNeverCrashes() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        for (previous, name) in zip("abcdefgh", "bcdefghi") {
            bomb += "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 10).joined(separator: ", ") + "]\n"
        }
        let inputs: [(String, Data)] = [
            ("empty.yaml", Data()),
            ("junk.yaml", Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) })),
            ("deep.yaml", Data((String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)).utf8)),
            ("bomb.yaml", Data(bomb.utf8)),
            ("tabs.yaml", Data("version: 1\nsources:\n\tgnss: {}\n".utf8)),
            ("latin1.yaml", Data([0x6E, 0x61, 0x6D, 0x65, 0x3A, 0x20, 0xE9, 0x0A])),
        ]
        for (name, data) in inputs {
            try data.write(to: dir.url.appendingPathComponent(name))
            let result = try runGeomon(["validate", name], currentDirectory: dir.url)
            #expect(result.exitCode == 65, "\(name)")
            #expect(result.stderr.hasPrefix("\(name):1:") || result.stderr.hasPrefix("\(name):"), "\(name)")
            #expect(!result.stderr.contains("Fatal error"), "\(name)")
        }
    }
}
