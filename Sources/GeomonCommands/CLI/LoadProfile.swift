import GeomonCore
import GeomonDaemon

/// Loads a profile for a command: warnings and errors are printed compiler-style on stderr;
/// a missing file exits 66, an invalid profile 65.
func loadProfileOrExit(_ path: String, insecurePermissions: Bool = false) throws -> Profile {
    do {
        return try loadProfile(path: path, insecurePermissions: insecurePermissions, warn: { writeStderr($0.text) })
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
