import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Transparent huge pages for the heap of a process that loads a large fence set.
///
/// Loading a million fences leaves ~10⁶ rings in the C heap in file order, and the index
/// build reads them in spatial order: with 4 KiB pages nearly every ring costs a TLB miss
/// (a page walk) on top of its cache misses, and the loader takes one page fault per 4 KiB.
/// glibc can put its heap on 2 MiB pages (`GLIBC_TUNABLES=glibc.malloc.hugetlb=1`), but
/// reads the setting only when a process starts. So, before anything else, `prepare` works
/// out how much fence data the command line names, and when it is at least `threshold`
/// re-executes geomon (same pid, name, arguments and descriptors) with the setting added. The
/// re-executed process puts the caller's `GLIBC_TUNABLES` back at once, so its children (the
/// coarse command source; hooks get a clean environment anyway) never inherit it. The index's
/// own arrays are advised separately (`FenceStore.adviseHugePages`), whatever this decides.
///
/// Only speed changes, never a result. Measured in docs/benchmarks.md (the huge page rows).
/// `GEOMON_HUGE_PAGES=off` disables it, `on` forces it (any fence data size); a
/// `GLIBC_TUNABLES` that already sets `glibc.malloc.hugetlb` is left to decide.
public enum HeapPages {
    /// Fence data (GeoJSON bytes) from which the heap goes on huge pages: a set this large
    /// has ~30,000 fences or more, and its heap spans hundreds of 2 MiB pages, so the few
    /// partly used ones cost little.
    static let threshold: Int64 = 64 << 20
    static let setting = "glibc.malloc.hugetlb=1"
    /// Set for the re-executed process: the caller's `GLIBC_TUNABLES`, prefixed with "=",
    /// or "-" when it had none.
    static let marker = "GEOMON_HEAP_REEXEC"
    static let modeVariable = "GEOMON_HUGE_PAGES"

    /// Whether this process runs with its heap on huge pages (for the benchmark's report).
    nonisolated(unsafe) private(set) static var active = false

    /// Call first in `main`, before any thread starts. Returns only when no re-execution
    /// happens (not needed, disabled, or `execv` failed: then the process goes on as it is).
    public static func prepare(program: String, arguments: [String]) {
        if let saved = value(marker) {
            // The re-executed process: the tunable did its work at startup; restore the
            // caller's environment for everything from here on.
            if saved.hasPrefix("=") {
                setenv("GLIBC_TUNABLES", String(saved.dropFirst()), 1)
            } else {
                unsetenv("GLIBC_TUNABLES")
            }
            unsetenv(marker)
            active = true
            return
        }
        var mode = value(modeVariable)?.lowercased() ?? "auto"
        if !["auto", "on", "1", "off", "0"].contains(mode) {
            writeStderr("geomon: warning: \(modeVariable)=\(mode) is not auto, on or off; using auto")
            mode = "auto"
        }
        if mode == "off" || mode == "0" { return }
        let tunables = value("GLIBC_TUNABLES")
        if let tunables, tunables.contains("glibc.malloc.hugetlb") {
            active = tunables.contains(setting)
            return
        }
        guard mode == "on" || mode == "1" || fenceDataBytes(arguments) >= threshold else { return }
        setenv(marker, tunables.map { "=" + $0 } ?? "-", 1)
        setenv("GLIBC_TUNABLES", tunables.map { $0 + ":" + setting } ?? setting, 1)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        // The binary's own path (not /proc/self/exe, which would name the process "exe" in
        // ps, top and pkill); /proc/self/exe when it cannot be read or was replaced.
        var target = "/proc/self/exe"
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: target), resolved.hasPrefix("/"),
           !resolved.hasSuffix(" (deleted)") {
            target = resolved
        }
        execv(target, argv)
        // Not re-executed (no /proc, say): go on with the default heap.
        for pointer in argv { free(pointer) }
        if let tunables { setenv("GLIBC_TUNABLES", tunables, 1) } else { unsetenv("GLIBC_TUNABLES") }
        unsetenv(marker)
    }

    /// Bytes of fence data the arguments name: the files after `--fences` (and `bench
    /// --synthetic N`'s fences, as ~1.5 kB each), and the GeoJSON
    /// files the profiles refer to (after `--profile`, or `validate`'s operands). Profiles are
    /// scanned as text for `geojson:` keys: a miss only costs speed.
    static func fenceDataBytes(_ arguments: [String]) -> Int64 {
        guard let command = arguments.first, ["bench", "query", "replay", "run", "validate"].contains(command) else { return 0 }
        var fenceFiles: [String] = []
        var profiles: [String] = []
        var syntheticBytes: Int64 = 0
        var i = 1
        while i < arguments.count {
            let argument = arguments[i]
            if command == "bench", argument == "--synthetic", i + 1 < arguments.count, let n = Int64(arguments[i + 1]), n > 0 {
                // Generated in memory: about what the same fences take as GeoJSON.
                syntheticBytes += n * 1500
            }
            if argument == "--fences" || argument == "--profile", i + 1 < arguments.count {
                if argument == "--fences" { fenceFiles.append(arguments[i + 1]) } else { profiles.append(arguments[i + 1]) }
                i += 2
                continue
            }
            if command == "validate", !argument.hasPrefix("-") { profiles.append(argument) }
            i += 1
        }
        for profile in profiles {
            fenceFiles += geojsonReferences(profile: profile)
        }
        return fenceFiles.reduce(syntheticBytes) { $0 + fileSize($1) }
    }

    /// The `geojson:` values in a profile, resolved against its directory.
    static func geojsonReferences(profile: String) -> [String] {
        guard (1...(4 << 20)).contains(fileSize(profile)), let text = try? String(contentsOfFile: profile, encoding: .utf8) else { return [] }
        let directory = profile.contains("/") ? String(profile[..<profile.lastIndex(of: "/")!]) : "."
        var found: [String] = []
        for line in text.split(separator: "\n") {
            guard let key = line.firstRange(of: "geojson:") else { continue }
            var rest = line[key.upperBound...].drop(while: { $0 == " " || $0 == "\t" })
            if let comment = rest.firstRange(of: " #") { rest = rest[..<comment.lowerBound] }
            let strip: Set<Character> = [" ", "\t", "\r", "\"", "'", ",", "}", "]"]
            let path = String(rest.drop(while: strip.contains).reversed().drop(while: strip.contains).reversed())
            guard !path.isEmpty else { continue }
            found.append(path.hasPrefix("/") ? path : directory + "/" + path)
        }
        return found
    }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return 0 }
        return Int64(info.st_size)
    }

    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
