import GeomonCore
import GeomonDaemon

/// What a command other than `validate` says of a profile's warnings.
enum LintOutput {
    /// One line: how many, and that `geomon validate` lists them (`ProfileWarnings.summary`).
    case summary
    /// Nothing (the profile only names a database).
    case quiet
}

/// Loads a profile for a command: errors are printed compiler-style on stderr, warnings as one
/// line (`geomon validate` alone lists them); a missing file exits 66, an invalid profile 65.
func loadProfileOrExit(_ path: String, insecurePermissions: Bool = false, lint: LintOutput = .summary) throws -> Profile {
    do {
        return try loadProfile(path: path, insecurePermissions: insecurePermissions, warn: { warnings in
            if lint == .summary { writeStderr("geomon: " + warnings.summary(profilePath: path)) }
        })
    } catch {
        if error.isMissing {
            writeStderr("geomon: error: \(error.message)")
            throw ExitCode.noInput
        }
        writeStderr(error.description.replacingLast(line: "geomon: error: \(error.message)"))
        throw ExitCode.dataError
    }
}

private extension String {
    /// Replaces the final line (the summary) so it carries the `geomon: error:` prefix.
    func replacingLast(line: String) -> String {
        var lines = split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last == "" { lines.removeLast() }
        if !lines.isEmpty { lines.removeLast() }
        return (lines + [line]).joined(separator: "\n")
    }
}
