// libFuzzer harness: the YAML profile loader (libyaml → nodes → schema → Profile) on bytes.
// The profile "lives" in a directory that does not exist, so relative GeoJSON and hook paths
// resolve to nothing and are reported, never read from the fuzzing machine.
import GeomonConfig
import GeomonCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProfileYAML(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let path = "/nonexistent-geomon-fuzz/profile.yaml"
    let result = ProfileLoader.load(bytes: bytes, path: path)
    checkDiagnostics(result.diagnostics.map { ($0.message, $0.location) }, "profile")
    if let profile = result.profile {
        if result.hasErrors { violation("profile: returned a profile with errors") }
        var ids = Set<String>()
        for fence in profile.fences {
            checkFence(fence, "profile")
            if !ids.insert(fence.id).inserted { violation("profile: duplicate fence id '\(fence.id)' accepted") }
        }
    } else if !result.hasErrors {
        violation("profile: no profile and no error")
    }
    // Same input, same answer (diagnostics are compared in full).
    let again = ProfileLoader.load(bytes: bytes, path: path)
    if again.diagnostics != result.diagnostics { violation("profile: diagnostics differ between two loads") }
    return 0
}
