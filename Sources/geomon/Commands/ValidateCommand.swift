import GeomonConfig
import GeomonCore

/// `geomon validate`: checks profiles and prints compiler-style diagnostics.
enum ValidateCommand: Command {
    static let name = "validate"
    static let summary = "Checks profiles and prints compiler-style diagnostics"
    static let help = """
    usage: geomon validate PROFILE… [--format text|json]

    Checks each profile (syntax, keys, types, units, ranges, fences, GeoJSON files, hooks,
    cross-field rules, lint warnings) and reports every problem of every file in one run.

    options:
      --format text   diagnostics on stderr as 'path:line:column: error: message' with the
                      source line and a caret; 'path: ok' on stdout per valid profile (default)
      --format json   a JSON array of {file, line, column, severity, message} on stdout

    exit codes: 0 all valid (warnings allowed), 65 a profile is invalid,
                66 a profile is missing or unreadable, 64 usage error.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let format = try arguments.choice("--format", ["text", "json"], default: "text")
        let paths = try arguments.positionals()
        guard !paths.isEmpty else { throw UsageError("name at least one PROFILE to validate") }
        var all: [Diagnostic] = []
        var missing = false
        var invalid = false
        for path in paths {
            let result: ProfileLoadResult
            do {
                result = try ProfileLoader.load(path: path)
            } catch {
                missing = true
                if format == "json" {
                    all.append(.error(error.description, at: nil))
                } else {
                    writeStderr("geomon: error: \(error.description)")
                }
                continue
            }
            all += result.diagnostics
            if format == "text" {
                if !result.diagnostics.isEmpty {
                    writeStderr(DiagnosticRenderer.text(result.diagnostics))
                }
                let errors = result.diagnostics.filter { $0.severity == .error }.count
                let warnings = result.diagnostics.filter { $0.severity == .warning }.count
                let warningText = warnings == 0 ? "" : " (\(warnings) warning\(warnings == 1 ? "" : "s"))"
                if errors == 0 {
                    print("\(path): ok\(warningText)")
                } else {
                    writeStderr("\(path): invalid, \(errors) error\(errors == 1 ? "" : "s")\(warnings == 0 ? "" : ", \(warnings) warning\(warnings == 1 ? "" : "s")")")
                }
            }
            if result.hasErrors { invalid = true }
        }
        if format == "json" {
            print(DiagnosticRenderer.json(all), terminator: "")
        }
        if missing { return ExitCode.noInput.code }
        return invalid ? ExitCode.dataError.code : ExitCode.success.code
    }
}
