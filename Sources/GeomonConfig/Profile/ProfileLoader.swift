public import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// The outcome of loading one profile file: the profile (when there are no errors) and
/// every diagnostic found, in source order.
public struct ProfileLoadResult: Sendable {
    public var profile: Profile?
    public var diagnostics: [Diagnostic]
    /// Ids of GeoJSON fences with ring defects, used by the even-odd rule (warned about).
    public var repairedFences: [String] = []

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
    ///
    /// `trust` checks the profile file and every file it references (GeoJSON, programs) for
    /// unsafe permissions and, as root, ownership and symlinks (docs/security.md); pass
    /// `.insecure` for `--insecure-permissions`.
    ///
    /// `strict` makes ring defects in GeoJSON files errors (`validate --strict`).
    public static func load(path: String, trust: FileTrust = FileTrust(), strict: Bool = false) throws(ProfileFileError) -> ProfileLoadResult {
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
            var result = load(bytes: bytes, path: path, trust: trust, directory: realDirectory(of: path), strict: strict)
            if let problem = trust.problem(path, what: "profile") {
                result.diagnostics.insert(.error(problem, at: SourceLocation(file: path, line: 1, column: 1)), at: 0)
                result.profile = nil
            }
            return result
        }
    }

    /// The directory relative paths resolve against: the profile's own, or for a profile reached
    /// through a symlink the directory of the file it points to (where its hooks and GeoJSON
    /// files live). nil when the path is not a symlink.
    static func realDirectory(of path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return PathText.directory(of: String(cString: real))
    }

    /// Checks profile text already in memory; `path` names it and anchors relative paths
    /// (against `directory` when given, else the directory part of `path`).
    public static func load(bytes: [UInt8], path: String, trust: FileTrust = FileTrust(), directory: String? = nil, strict: Bool = false) -> ProfileLoadResult {
        var parser = YAMLParser()
        parser.maxBytes = maxBytes
        let parsed = parser.parse(bytes, file: path)
        guard let root = parsed.root else {
            return ProfileLoadResult(profile: nil, diagnostics: parsed.diagnostics)
        }
        let displayDirectory = directory ?? PathText.directory(of: path)
        let decoder = ProfileDecoder(
            file: path,
            displayDirectory: displayDirectory,
            absoluteDirectory: PathText.absolute(displayDirectory)
        )
        decoder.diagnostics = parsed.diagnostics
        decoder.trust = trust
        decoder.strictGeoJSON = strict
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
        return ProfileLoadResult(profile: profile, diagnostics: diagnostics, repairedFences: decoder.repairedFences)
    }

    /// The profile's own diagnostics by position, then those of referenced files in the
    /// order they were first mentioned (each by position); stable for equal positions.
    /// A diagnostic found twice (text reached again through a YAML alias) is kept once.
    static func ordered(_ diagnostics: [Diagnostic], mainFile: String) -> [Diagnostic] {
        var seen: Set<Diagnostic> = []
        let diagnostics = diagnostics.filter { seen.insert($0).inserted }
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
