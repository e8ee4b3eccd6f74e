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

    /// Fences and their index. A GeoJSON file is streamed into the index: its fences carry no
    /// shape of their own (`index.shape(of:)` gives it).
    struct Loaded {
        var fences: [Fence]
        var index: FenceIndex
        /// Bytes of the GeoJSON file read (0 for a profile).
        var fileBytes: Int
    }

    /// Fences of a profile, loaded and validated like `geomon validate` (diagnostics printed,
    /// exit 65 when invalid, 66 when missing).
    static func profileFences(path: String, insecurePermissions: Bool) throws -> Loaded {
        let profile = try loadProfileOrExit(path, insecurePermissions: insecurePermissions)
        return Loaded(fences: profile.fences, index: profile.makeIndex(), fileBytes: 0)
    }

    /// Fences of a GeoJSON FeatureCollection, streamed from the mapped file into the index;
    /// errors (unreadable file, bad features, shapes the geometry code cannot handle) fail
    /// the load.
    static func geoJSONFences(path: String, idProperty: String?) throws(Failure) -> Loaded {
        guard access(path, R_OK) == 0 else {
            throw Failure(messages: ["cannot read GeoJSON file '\(path)': \(String(cString: strerror(errno)))"], exitCode: ExitCode.noInput.code)
        }
        let mapped: MappedFile
        switch MappedFile.open(path) {
        case .success(let file): mapped = file
        case .failure(let failure): throw Failure(messages: ["cannot read GeoJSON file '\(path)': \(failure.reason)"], exitCode: ExitCode.noInput.code)
        }
        var builder = FenceIndex.Builder(geoJSONBytes: mapped.size)
        var fences: [Fence] = []
        // The reader refuses shapes beyond the geometry's limits (as errors) before the sink.
        var options = GeoJSONFences.Options(idProperty: idProperty)
        options.idPropertySpelling = { "--id-property \($0)" }
        let read = GeoJSONFences.read(mapped, file: path, options: options) { fence, shape in
            if fences.count == fences.capacity {
                let room = StreamGrowth.room(count: fences.count, capacity: fences.capacity, read: mapped.position, total: mapped.size)
                fences.reserveCapacity(room)
                builder.reserve(fences: room)
            }
            builder.add(shape)
            fences.append(fence)
        }
        let errors = read.diagnostics.filter { $0.severity == .error }.map { "\($0)" }
        if !errors.isEmpty { throw Failure(messages: errors, exitCode: ExitCode.dataError.code) }
        return Loaded(fences: fences, index: builder.build(), fileBytes: mapped.size)
    }

    /// Parses a GeoJSON file without keeping anything (the reader's own speed); the fences read.
    static func parseOnly(path: String) -> Int? {
        guard case .success(let mapped) = MappedFile.open(path) else { return nil }
        var count = 0
        _ = GeoJSONFences.read(mapped, file: path, options: .init()) { _, _ in count += 1 }
        return count
    }
}
