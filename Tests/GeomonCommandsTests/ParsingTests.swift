@testable import GeomonCommands
import GeomonCore
import GeomonDaemon
import Glibc
import Testing

/// argv → command values, without spawning the binary: every command's options, the errors
/// for bad values (a message naming the option; exit 64 in `main`), and the generated help.
@Suite struct ParsingTests {
    static func parse(_ argv: [String]) throws -> any GeomonCommand {
        guard case let .run(command) = try GeomonCLI.parse(argv) else {
            throw UsageError("not a command to run: \(argv)")
        }
        return command
    }

    /// The usage error argv gives (nil when it parses).
    static func error(_ argv: [String]) -> String? {
        do {
            _ = try GeomonCLI.parse(argv)
            return nil
        } catch let failure as GeomonCLI.ParseFailure {
            return failure.error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func validateTakesProfilesAFormatAndTheTrustFlag() throws {
        let c = try #require(try Self.parse(["validate", "a.yaml", "b.yaml", "--format", "json", "--insecure-permissions"]) as? ValidateCommand)
        #expect(c.paths == ["a.yaml", "b.yaml"] && c.json && c.insecurePermissions)
        let plain = try #require(try Self.parse(["validate", "a.yaml"]) as? ValidateCommand)
        #expect(!plain.json && !plain.insecurePermissions)
        #expect(Self.error(["validate"]) == "missing PROFILE")
        #expect(Self.error(["validate", "--format", "xml", "a.yaml"]) == "option '--format' must be one of text, json (got 'xml')")
        #expect(Self.error(["validate", "--format"]) == "option '--format' needs a value (text|json)")
    }

    @Test func anOptionWithoutItsValueGivenTwiceOrTooFarBackIsAUsageError() throws {
        // The next word is an option: the value is missing (not a file named "--stats").
        #expect(Self.error(["replay", "--profile", "p.yaml", "--db", "--stats", "t.jsonl"])
                == "option '--db' needs a value (PATH), not the option '--stats'")
        #expect(Self.error(["fences", "--profile", "--db", "x.db"]) == "option '--profile' needs a value (PROFILE), not the option '--db'")
        // A value that merely starts with dashes and is no option stays a value.
        #expect(Self.error(["events", "--db", "--odd-name.db"]) == nil)
        // Given twice, with two values: which one was meant is not guessed.
        #expect(Self.error(["events", "--db", "a.db", "--db", "b.db"]) == "option '--db' given twice")
        #expect(Self.error(["events", "--db", "a.db", "--format=json", "--format", "text"]) == "option '--format' given twice")
        // A time ago that does not fit the clock: a usage error, not an overflow.
        for ago in ["999999999999999w", "2000000000000d", "9223372036854775807s"] {
            #expect(Self.error(["events", "--db", "d.db", "--since", ago]) == "option '--since' goes back too far (got '\(ago)')")
        }
        // Arguments a command would silently ignore are refused.
        #expect(Self.error(["events", "--db", "d.db", "--svg", "x.svg", "--fence", "home"])
                == "--svg draws every stored fix and event: not with --fence, --since, --limit or --format")
        #expect(Self.error(["fences", "--profile", "p.yaml", "--db", "d.db", "--inside", "--format", "geojson"])
                == "option '--inside' lists as text or json (got --format geojson)")
        #expect(Self.error(["replay", "--profile", "p.yaml", "t.jsonl", "--publish-wait", "5"]) == "option '--publish-wait' belongs to --publish")
        #expect(Self.error(["bench", "fences", "--fences", "f.geojson", "--points", "p.csv", "--seed", "5"])
                == "options '--seed' and '--track-fixes' belong to --synthetic")
        // `help` finds two-word commands as the dispatcher does, and names one it does not know.
        #expect(try GeomonCLI.helpText(for: ["fences", "here"]) == FencesHereCommand.spec.help)
        #expect(throws: GeomonCLI.ParseFailure.self) { try GeomonCLI.helpText(for: ["fences", "bogus"]) }
    }

    @Test func replayReadsEveryOption() throws {
        let c = try #require(try Self.parse([
            "replay", "--profile", "p.yaml", "t1.nmea", "t2.gpx", "--db", "x.db", "--format=json", "--speed", "2.5",
            "--no-hooks", "--stats", "--compare-always-on", "--coarse", "c.jsonl", "--seed", "7", "--report", "-",
            "--svg", "s.svg", "--policy-log", "p.log", "--interpolate-gaps", "60", "--insecure-permissions",
        ]) as? ReplayCommand)
        #expect(c.profilePath == "p.yaml" && c.trackPaths == ["t1.nmea", "t2.gpx"] && c.db == "x.db")
        #expect(c.json && c.speed == 2.5 && c.noHooks && c.stats && c.insecurePermissions)
        #expect(c.options.compareAlwaysOn && !c.options.alwaysOn && c.options.seed == 7)
        #expect(c.options.interpolationMaxGap == .seconds(60))
        #expect(c.coarsePath == "c.jsonl" && c.reportPath == "-" && c.svgPath == "s.svg" && c.policyLogPath == "p.log")
    }

    @Test func replayRefusesBadValuesNamingTheOption() {
        #expect(Self.error(["replay", "t.nmea"]) == "missing '--profile PROFILE'")
        #expect(Self.error(["replay", "--profile", "p.yaml"]) == "missing TRACK")
        #expect(Self.error(["replay", "--profile", "p.yaml", "t", "--speed", "fast"]) == "option '--speed' needs a number (got 'fast')")
        #expect(Self.error(["replay", "--profile", "p.yaml", "t", "--speed", "0"]) == "option '--speed' must be in 0.001...1000000 (got 0)")
        #expect(Self.error(["replay", "--profile", "p.yaml", "t", "--seed", "-1"]) == "option '--seed' must be in 0...\(Int.max) (got -1)")
        #expect(Self.error(["replay", "--profile", "p.yaml", "t", "--interpolate-gaps", "1e9"]) == "option '--interpolate-gaps' must be in 0...86400 (got 1e9)")
        #expect(Self.error(["replay", "--profile", "p.yaml", "t", "--always-on", "--compare-always-on"]) == "'--always-on' and '--compare-always-on' exclude each other")
        #expect(Self.error(["replay", "--profile", "p.yaml", "t", "--no-hook"]) == "unknown option '--no-hook'; did you mean '--no-hooks'?")
        #expect(Self.error(["replay", "--profile", "p.yaml", "t", "--stats=yes"]) == "option '--stats' takes no value")
    }

    @Test func runReadsItsOptionsAndTheEndpoint() throws {
        let c = try #require(try Self.parse([
            "run", "--profile", "p.yaml", "--db", "d.db", "--gpsd", "[::1]:3000", "--log-level", "debug",
            "--always-on", "--print-events", "--exit-after", "2.5", "--insecure-permissions",
        ]) as? RunCommand)
        #expect(c.options.profilePath == "p.yaml" && c.options.databasePath == "d.db")
        #expect(c.options.gpsdOverride?.host == "::1" && c.options.gpsdOverride?.port == 3000)
        #expect(c.options.alwaysOn && c.options.printEvents && c.options.insecurePermissions)
        #expect(c.options.exitAfterSeconds == 2.5)
        #expect(Self.error(["run"]) == "missing '--profile PROFILE'")
        #expect(Self.error(["run", "--profile", "p", "--gpsd", "host:99999"]) == "option '--gpsd' needs HOST:PORT (got 'host:99999')")
        // An unclosed bracket, colons that are no IPv6 address: no endpoint. An IPv6 address
        // alone takes the default port.
        for bad in ["[::1", "[::1]x", "a:b:c", "::1]:80", "ho st:80"] {
            #expect(Self.error(["run", "--profile", "p", "--gpsd", bad]) == "option '--gpsd' needs HOST:PORT (got '\(bad)')", "\(bad)")
        }
        #expect(parseEndpoint("::1")?.host == "::1" && parseEndpoint("::1")?.port == 2947)
        #expect(parseEndpoint("[fe80::1]:3000")?.host == "fe80::1" && parseEndpoint("[fe80::1]:3000")?.port == 3000)
        #expect(parseEndpoint("gps.local")?.port == 2947)
        // Link-local addresses name their zone, as getaddrinfo takes them.
        #expect(parseEndpoint("[fe80::1%eth0]:2947")?.host == "fe80::1%eth0")
        #expect(parseEndpoint("fe80::1%eth0")?.port == 2947)
        #expect(parseEndpoint("fe80::1%") == nil)
        // An empty value names nothing (an unset shell variable).
        #expect(Self.error(["status", "--db", ""]) == "option '--db' needs a value (PATH), not an empty one")
        #expect(Self.error(["run", "--profile", "p", "--log-level", "loud"]) == "option '--log-level' must be one of error, warning, notice, info, debug (got 'loud')")
        #expect(Self.error(["run", "--profile", "p", "--exit-after", "-1"]) == "option '--exit-after' must be in 0...1000000000 (got -1)")
    }

    @Test func readingCommandsNeedADatabaseAndTakeFilters() throws {
        let events = try #require(try Self.parse(["events", "--db", "d.db", "--since", "2029-11-25", "--fence", "home", "--limit", "5", "--format", "json"]) as? EventsCommand)
        #expect(events.db == "d.db" && events.fence == "home" && events.limit == 5 && events.json)
        #expect(events.since == UTCTime(rfc3339: "2029-11-25T00:00:00Z"))
        let relative = try #require(try Self.parse(["events", "--db", "d.db", "--since", "2h"]) as? EventsCommand)
        #expect(relative.since != nil)
        #expect(Self.error(["events"]) == "missing '--db PATH'")
        #expect(Self.error(["events", "--db", "d", "--since", "yesterday"])?.hasPrefix("option '--since' needs a time") == true)
        #expect(Self.error(["events", "--db", "d", "--limit", "0"]) == "option '--limit' must be in 1...2147483647 (got 0)")
        #expect(Self.error(["events", "--db", "d", "--profile", "p.yaml"]) == "--profile belongs to --svg")
        let status = try #require(try Self.parse(["status", "--db", "d.db", "--format", "json"]) as? StatusCommand)
        #expect(status.database.db == "d.db" && status.json)
        let byProfile = try #require(try Self.parse(["status", "--profile", "p.yaml"]) as? StatusCommand)
        #expect(byProfile.database.profile == "p.yaml" && byProfile.database.db == nil)
        #expect(Self.error(["status"]) == "one of --db or --profile is required")
        let export = try #require(try Self.parse(["export", "--db", "d.db", "--format", "geojson", "--since", "2029-01-01T00:00:00Z"]) as? ExportCommand)
        #expect(export.format == "geojson" && export.since == UTCTime(rfc3339: "2029-01-01T00:00:00Z"))
        #expect(Self.error(["export", "--db", "d.db"]) == "missing '--format gpx|geojson|jsonl'")
        #expect(Self.error(["export", "--db", "d.db", "--format", "kml"]) == "option '--format' must be one of gpx, geojson, jsonl (got 'kml')")
    }

    @Test func queryTakesOnePointOrNoneAndOneFenceSource() throws {
        let q = try #require(try Self.parse(["query", "--fences", "f.geojson", "--id-property", "name", "47.5", "-8.25"]) as? QueryCommand)
        #expect(q.fencesPath == "f.geojson" && q.idProperty == "name")
        #expect(q.single == Coordinate(latitude: 47.5, longitude: -8.25))
        #expect(Self.error(["query", "47", "8"]) == "give exactly one of --profile P or --fences FILE.geojson")
        #expect(Self.error(["query", "--profile", "p", "--id-property", "x"]) == "--id-property needs --fences")
        #expect(Self.error(["query", "--profile", "p", "95", "8"]) == "LAT LON must be numbers with latitude in -90...90 and longitude in -180...180 (got '95 8')")
        #expect(Self.error(["query", "--profile", "p", "1", "2", "3"]) == "unexpected argument '3'")
        // Decimal numbers only: `Double` would read hex, inf and nan.
        for bad in [["0x10", "0"], ["nan", "0"], ["inf", "1"]] {
            #expect(Self.error(["query", "--profile", "p"] + bad)?.hasPrefix("LAT LON must be numbers") == true, "\(bad)")
        }
    }

    @Test func groupsNeedAKnownSubcommandAndOptionsMayComeFirst() throws {
        let fire = try #require(try Self.parse(["hooks", "--profile", "p.yaml", "fire", "--event", "dwell", "--fence", "home"]) as? HooksFireCommand)
        #expect(fire.profilePath == "p.yaml" && fire.kind == .dwell && fire.fence == "home")
        let list = try #require(try Self.parse(["hooks", "list", "--db", "d.db"]) as? HooksListCommand)
        #expect(list.db == "d.db")
        #expect(try Self.parse(["hooks", "retry", "--db", "d.db"]) is HooksRetryCommand)
        #expect(try Self.parse(["hooks", "dead", "--db", "d.db"]) is HooksDeadCommand)
        #expect(Self.error(["hooks"]) == "missing subcommand (fire, list, dead, retry)")
        #expect(Self.error(["hooks", "frobnicate"]) == "unknown subcommand 'frobnicate' (expected fire, list, dead, retry)")
        #expect(Self.error(["hooks", "fire", "--profile", "p"]) == "missing '--event enter|exit|dwell|location|approach|moving|still|trip_start|trip_end|arrival|departure|overspeed|overspeed_end|mode'")
        #expect(Self.error(["hooks", "list", "--db", "d", "--event", "enter"]) == "unknown option '--event'")
        let bench = try #require(try Self.parse(["bench", "fences", "--synthetic", "1000", "--seed", "3", "--repeat", "2"]) as? BenchFencesCommand)
        #expect(bench.synthetic == 1000 && bench.seed == 3 && bench.repeats == 2)
        #expect(Self.error(["bench", "fences", "--synthetic", "10", "--fences", "f"]) == "--synthetic N replaces --fences, --points, --id-property and --track")
        #expect(Self.error(["bench", "generate", "--fences", "10", "--points", "5", "--seed", "1"]) == "missing '--out DIR'")
    }

    @Test func topLevelHelpVersionAndUnknownCommands() throws {
        guard case let .help(text) = try GeomonCLI.parse(["--help"]) else { Issue.record("no help"); return }
        for entry in GeomonCLI.entries { #expect(text.contains(entry.name)) }
        guard case .version = try GeomonCLI.parse(["--version"]) else { Issue.record("no version"); return }
        #expect(Self.error(["replya"]) == "unknown command 'replya'; did you mean 'replay'?")
        #expect(Self.error([]) == "missing command")
        guard case let .help(replayHelp) = try GeomonCLI.parse(["replay", "--help"]) else { Issue.record("no help"); return }
        #expect(replayHelp.hasPrefix("usage: geomon replay --profile PROFILE TRACK…"))
        guard case let .help(group) = try GeomonCLI.parse(["help", "hooks"]) else { Issue.record("no help"); return }
        #expect(group.contains("hooks fire") && group.contains("hooks retry"))
    }

    /// `--help` is generated from the declarations: every declared option appears in its
    /// command's help, with its value placeholder and its text.
    @Test func everyDeclaredOptionIsInItsCommandsHelp() {
        for spec in GeomonCLI.allSpecs {
            for option in spec.options {
                #expect(spec.help.contains(option.synopsis), "\(spec.name): \(option.name)")
                let firstWords = option.help.split(separator: " ").prefix(3).joined(separator: " ")
                #expect(spec.help.contains(firstWords), "\(spec.name): \(option.name) help")
            }
            for argument in spec.arguments { #expect(spec.help.contains(argument.name), "\(spec.name): \(argument.name)") }
        }
    }
}

/// Commands that signal the daemon holding a database signal only a `geomon run`: a replay
/// holding it would die of the signal.
@Suite struct LockRoleTests {
    @Test func aReplayHoldingTheDatabaseIsNamedAndNotSignalled() throws {
        let path = "/tmp/geomon-lock-role-\(getpid()).db"
        defer { unlink(path + ".lock") }
        do {
            let lock = try InstanceLock(databasePath: path, role: "replay")
            let held = try #require(InstanceLock.holderAndRole(databasePath: path))
            #expect(held.pid == getpid() && held.role == "replay")
            // Were it signalled, this test process would be the one to get SIGHUP.
            #expect(FencesRemoveCommand.notifyDaemon(db: path) == 0)
            withExtendedLifetime(lock) {}
        }
        #expect(InstanceLock.holderAndRole(databasePath: path) == nil)
    }
}
