import Foundation

/// Files a command writes, checked against what it reads and against each other before it
/// starts: an output given the path of a track, the profile or the database would overwrite
/// it (a slip of the shell's history), and two outputs on one path would clobber each other.
/// `-` is standard output only where an option says so; elsewhere it is refused rather than
/// written as a file named `-`.
enum OutputPaths {
    /// `outputs` and `inputs`: (option, path or nil). Paths are compared after resolving
    /// symbolic links and `..` (a file that does not exist yet by its directory).
    static func check(outputs: [(String, String?)], inputs: [(String, String?)]) throws {
        var seen: [String: String] = [:]
        for (option, path) in inputs {
            guard let path, path != "-" else { continue }
            seen[resolved(path)] = seen[resolved(path)] ?? option
        }
        var written: [String: String] = [:]
        for (option, path) in outputs {
            guard let path else { continue }
            if path == "-" { throw UsageError("option '\(option)' takes a file name ('-' is standard output only for --report)") }
            let key = resolved(path)
            if let other = seen[key] {
                throw UsageError("option '\(option)' names '\(path)', \(other == "TRACK" ? "a track" : "the file \(other) names"), which it would overwrite")
            }
            if let other = written[key] {
                throw UsageError("options '\(other)' and '\(option)' name the same file '\(path)'")
            }
            written[key] = option
        }
    }

    /// The path with symbolic links and `..` resolved; a file not there yet by its directory.
    static func resolved(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        if FileManager.default.fileExists(atPath: url.path) { return url.resolvingSymlinksInPath().path }
        return url.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent).path
    }
}
