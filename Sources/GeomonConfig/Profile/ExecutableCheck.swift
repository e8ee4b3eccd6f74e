import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// Checks that a program named in a profile can be run safely.
enum ExecutableCheck {
    enum Outcome: Equatable {
        /// Usable; the absolute path to run.
        case ok(String)
        case problem(String)
    }

    /// `program` containing a `/` resolves against `directory`; a bare name is looked up in
    /// `directory` first, then in the hook PATH (`HookSettings.searchPath`), as the hook runner
    /// does. `what` names the program in messages ("hook program").
    static func check(_ program: String, directory: String, what: String, trust: FileTrust = FileTrust()) -> Outcome {
        if program.isEmpty { return .problem("\(what) is empty") }
        if program.contains("/") {
            let path = program.hasPrefix("/") ? program : PathText.absolute(PathText.join(directory, program))
            return inspect(path, shown: program, what: what, trust: trust)
        }
        let local = PathText.join(directory, program)
        if access(local, F_OK) == 0 { return inspect(local, shown: program, what: what, trust: trust) }
        for dir in HookSettings.searchPath.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = PathText.join(String(dir), program)
            if access(candidate, X_OK) == 0 {
                return inspect(candidate, shown: program, what: what, trust: trust)
            }
        }
        return .problem("\(what) '\(program)' is neither in the profile's directory nor in the hook PATH \(HookSettings.searchPath)")
    }

    private static func inspect(_ path: String, shown: String, what: String, trust: FileTrust) -> Outcome {
        // The program as written and, when that differs, as resolved; hints use the resolved path.
        let named = shown == path ? "'\(shown)'" : "'\(shown)' (\(path))"
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return .problem("\(what) \(named) does not exist") }
            return .problem("\(what) \(named) cannot be inspected: \(String(cString: strerror(errno)))")
        }
        let mode = UInt32(info.st_mode)
        guard mode & UInt32(S_IFMT) == UInt32(S_IFREG) else {
            return .problem("\(what) \(named) is not a regular file")
        }
        let permissions = mode & 0o7777
        let octal = String(permissions, radix: 8)
        let modeText = String(repeating: "0", count: max(0, 4 - octal.count)) + octal
        if permissions & 0o111 == 0 || access(path, X_OK) != 0 {
            return .problem("\(what) \(named) is not executable (mode \(modeText)); run: chmod +x \(path)")
        }
        if trust.enforced && permissions & 0o022 != 0 {
            return .problem("\(what) \(named) is group- or world-writable (mode \(modeText)); others could change what geomon runs: chmod go-w \(path), \(FileTrust.overrideHint)")
        }
        if let problem = trust.problem(path, what: what, shown: shown) {
            return .problem(problem)
        }
        return .ok(path)
    }
}

/// Minimal path text helpers (no Foundation).
enum PathText {
    static func join(_ directory: String, _ relative: String) -> String {
        if relative.hasPrefix("/") { return relative }
        if directory.isEmpty || directory == "." { return relative }
        return directory.hasSuffix("/") ? directory + relative : directory + "/" + relative
    }

    /// The directory part of a path ("." when there is none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// `path` made absolute against the current directory, with `.` components removed.
    static func absolute(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: 4096)
            let cwd = getcwd(&buffer, buffer.count) != nil
                ? String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                : "/"
            full = join(cwd, path)
        }
        var parts: [Substring] = []
        for part in full.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}
