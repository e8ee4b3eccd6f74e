import GeomonConfig
import GeomonCore
import GeomonFormat

/// `geomon validate`: checks profiles and prints compiler-style diagnostics.
struct ValidateCommand: GeomonCommand {
    static let spec = CommandSpec(
        "validate",
        abstract: "Checks profiles and prints compiler-style diagnostics",
        discussion: """
        Checks each profile (syntax, keys, types, units, ranges, fences, GeoJSON files, hooks,
        cross-field rules, lint warnings) and reports every problem of every file in one run.
        Text diagnostics go to stderr as 'path:line:column: error: message' with the source line
        and a caret, and 'path: ok' to stdout per valid profile, followed by the bounds the power
        policy plans with ('path: planned for foot (policy.activity): max_speed 4 m/s, ...') and
        the profile's modes in the order they are tried ('path: mode driving: continuous when
        external power online'); JSON
        is an array of {file, line,
        column, severity, message} on stdout.

        Fences from GeoJSON files with ring defects (crossing or touching edges, holes outside
        their ring, unclosed rings, RFC 7946 winding, repeated positions) are warnings: geomon
        uses them by the even-odd rule (docs/geometry.md). --strict makes them errors, as
        'strict: true' does for one fence entry.

        exit codes: 0 all valid (warnings allowed), 65 a profile is invalid, 66 a profile is
        missing or unreadable, 64 usage error.
        """,
        options: [
            .choice("--format", ["text", "json"], "text (default) or json"),
            .flag("--strict", "ring defects in GeoJSON files are errors, not warnings"),
            .flag("--insecure-permissions", "accept group/world-writable profiles, GeoJSON files and programs (and, as root, files owned by other users or reached through their symlinks)"),
        ],
        arguments: [ArgumentSpec("PROFILE", "the profiles to check", arity: .many, completion: .file(["yaml", "yml"]))]
    )

    var json: Bool
    var insecurePermissions: Bool
    var strict: Bool
    var paths: [String]

    init(_ arguments: ParsedArguments) throws {
        json = arguments.choice("--format", default: "text") == "json"
        insecurePermissions = arguments.flag("--insecure-permissions")
        strict = arguments.flag("--strict")
        paths = arguments.positionals
    }

    func run() throws -> Int32 {
        let trust = FileTrust(enforced: !insecurePermissions)
        var all: [Diagnostic] = []
        var missing = false
        var invalid = false
        for path in paths {
            let result: ProfileLoadResult
            do {
                result = try ProfileLoader.load(path: path, trust: trust, strict: strict)
            } catch {
                missing = true
                if json {
                    var diagnostic = Diagnostic.error(error.description, at: nil)
                    diagnostic.file = path
                    all.append(diagnostic)
                } else {
                    writeStderr("geomon: error: \(error.description)")
                }
                continue
            }
            all += result.diagnostics
            if !json {
                if !result.diagnostics.isEmpty {
                    writeStderr(DiagnosticRenderer.text(result.diagnostics))
                }
                let errors = result.diagnostics.filter { $0.severity == .error }.count
                let warnings = result.diagnostics.filter { $0.severity == .warning }.count
                let warningText = warnings == 0 ? "" : " (\(warnings) warning\(warnings == 1 ? "" : "s"))"
                if errors == 0 {
                    print("\(path): ok\(warningText)")
                    if let profile = result.profile {
                        print("\(path): \(profile.policy.plannedBoundsText)")
                        // The modes in the order they are tried, then the fallback.
                        for rule in profile.modes {
                            print("\(path): mode \(rule.text)")
                            // A mode's own policy may plan with other bounds.
                            if let policy = rule.policy, policy.plannedBounds != profile.policy.plannedBounds {
                                print("\(path): mode \(rule.name): \(policy.plannedBoundsText)")
                            }
                        }
                        if !profile.modes.isEmpty { print("\(path): mode \(ModeRule.fallbackName): the profile's own settings when no mode holds") }
                    }
                } else {
                    writeStderr("\(path): invalid, \(errors) error\(errors == 1 ? "" : "s")\(warnings == 0 ? "" : ", \(warnings) warning\(warnings == 1 ? "" : "s")")")
                }
            }
            if result.hasErrors { invalid = true }
        }
        if json {
            print(DiagnosticRenderer.json(all), terminator: "")
        }
        if missing { return ExitCode.noInput.code }
        return invalid ? ExitCode.dataError.code : ExitCode.success.code
    }
}
