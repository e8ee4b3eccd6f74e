public import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// The outcome of loading one profile file: the profile (when there are no errors) and
/// every diagnostic found, in source order.
public struct ProfileLoadResult: Sendable {
    public var profile: Profile?
    public var diagnostics: [Diagnostic]

    /// True when at least one diagnostic is an error.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}

/// A profile file that could not be read at all (missing, a directory, no permission).
public struct ProfileFileError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot read profile '\(path)': \(reason)" }
}

/// Loads YAML profiles: libyaml → `YAMLNode` → schema walk → `Profile` + diagnostics.
public enum ProfileLoader {
    /// The largest profile accepted, in bytes.
    public static let maxBytes = 16 * 1024 * 1024

    /// Reads and checks `path`. Diagnostics name the file as `path` was given.
    public static func load(path: String) throws(ProfileFileError) -> ProfileLoadResult {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ProfileFileError(path: path, reason: String(cString: strerror(errno)))
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            throw ProfileFileError(path: path, reason: "is a directory")
        }
        if Int(info.st_size) > maxBytes {
            let diagnostic = Diagnostic.error("file is too large for a profile (\(info.st_size) bytes; the limit is \(maxBytes / (1024 * 1024)) MB)", at: SourceLocation(file: path, line: 1, column: 1))
            return ProfileLoadResult(profile: nil, diagnostics: [diagnostic])
        }
        switch FileBytes.read(path, limit: maxBytes) {
        case .failure(let reason):
            if reason.hasPrefix("file is larger") {
                let diagnostic = Diagnostic.error("file is too large for a profile (the limit is \(maxBytes / (1024 * 1024)) MB)", at: SourceLocation(file: path, line: 1, column: 1))
                return ProfileLoadResult(profile: nil, diagnostics: [diagnostic])
            }
            throw ProfileFileError(path: path, reason: reason)
        case .success(let bytes):
            return load(bytes: bytes, path: path)
        }
    }

    /// Checks profile text already in memory; `path` names it and anchors relative paths.
    public static func load(bytes: [UInt8], path: String) -> ProfileLoadResult {
        var parser = YAMLParser()
        parser.maxBytes = maxBytes
        let parsed = parser.parse(bytes, file: path)
        guard let root = parsed.root else {
            return ProfileLoadResult(profile: nil, diagnostics: parsed.diagnostics)
        }
        let displayDirectory = PathText.directory(of: path)
        let decoder = ProfileDecoder(
            file: path,
            displayDirectory: displayDirectory,
            absoluteDirectory: PathText.absolute(displayDirectory)
        )
        decoder.diagnostics = parsed.diagnostics
        var records: [FenceRecord] = []
        var profile = decoder.decodeProfile(root, fences: &records)
        if let checked = profile {
            decoder.checkRules(checked, records: records)
        }
        let diagnostics = ordered(decoder.diagnostics, mainFile: path)
        if diagnostics.contains(where: { $0.severity == .error }) {
            profile = nil
        } else {
            profile?.path = PathText.absolute(path)
            profile?.directory = decoder.absoluteDirectory
        }
        return ProfileLoadResult(profile: profile, diagnostics: diagnostics)
    }

    /// The profile's own diagnostics by position, then those of referenced files in the
    /// order they were first mentioned (each by position); stable for equal positions.
    static func ordered(_ diagnostics: [Diagnostic], mainFile: String) -> [Diagnostic] {
        var rank: [String: Int] = [mainFile: 0]
        for diagnostic in diagnostics {
            if let file = diagnostic.location?.file, rank[file] == nil { rank[file] = rank.count }
        }
        return diagnostics.enumerated().sorted { a, b in
            let la = a.element.location, lb = b.element.location
            let ka = (rank[la?.file ?? mainFile] ?? 0, la?.line ?? 0, la?.column ?? 0, a.offset)
            let kb = (rank[lb?.file ?? mainFile] ?? 0, lb?.line ?? 0, lb?.column ?? 0, b.offset)
            return ka < kb
        }.map(\.element)
    }
}
