import GeomonCore
import GeomonDaemon

/// What a command other than `validate` says of a profile's warnings.
enum LintOutput {
    /// One line: how many, and that `geomon validate` lists them (`ProfileWarnings.summary`).
    case summary
    /// Nothing (the profile only names a database).
    case quiet
}

/// `--insecure-permissions` of the commands that read a profile and run nothing of it: the
/// trust check's refusal names it, so every command that reads a profile takes it.
let insecureProfileOption = OptionSpec.flag("--insecure-permissions", "accept a group/world-writable profile (see docs/security.md)")

/// Loads a profile for a command: errors are printed compiler-style on stderr, warnings as one
/// line (`geomon validate` alone lists them); a missing file exits 66, an invalid profile 65.
func loadProfileOrExit(_ path: String, insecurePermissions: Bool = false, lint: LintOutput = .summary) throws -> Profile {
    do {
        return try loadProfile(path: path, insecurePermissions: insecurePermissions, warn: { warnings in
            if lint == .summary { writeStderr("geomon: " + warnings.summary(profilePath: path)) }
        })
    } catch {
        writeStderr(error.commandLineText)
        throw error.isMissing ? ExitCode.noInput : ExitCode.dataError
    }
}
