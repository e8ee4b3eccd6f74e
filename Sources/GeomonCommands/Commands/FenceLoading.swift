import GeomonFormat
import GeomonConfig
import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// Where `query` and `bench` get their fences from, isolated so the profile loader can be
/// swapped in at one place.
enum FenceLoading {
    /// A failure to load fences, with the exit code to use.
    struct Failure: Error {
        var messages: [String]
        var exitCode: Int32
    }

    /// Fences of a profile, loaded and validated like `geomon validate` (diagnostics printed,
    /// exit 65 when invalid, 66 when missing).
    static func profileFences(path: String) throws -> [Fence] {
        try loadProfileOrExit(path).fences
    }

    /// Fences of a GeoJSON FeatureCollection; errors (unreadable file, bad features, shapes the
    /// geometry code cannot handle) fail the load.
    static func geoJSONFences(path: String, idProperty: String?) throws(Failure) -> [Fence] {
        guard access(path, R_OK) == 0 else {
            throw Failure(messages: ["cannot read GeoJSON file '\(path)'"], exitCode: ExitCode.noInput.code)
        }
        let (fences, diagnostics) = GeoJSONFences.load(path: path, idProperty: idProperty)
        var errors = diagnostics.filter { $0.severity == .error }.map { "\($0)" }
        for fence in fences {
            for problem in geometryLimitProblems(fence.shape) {
                errors.append("\(path): error: fence '\(fence.id)': \(problem.text)")
            }
        }
        if !errors.isEmpty { throw Failure(messages: errors, exitCode: ExitCode.dataError.code) }
        return fences
    }
}
