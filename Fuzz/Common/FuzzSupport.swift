// Shared by every fuzz harness (compiled into each one by scripts/fuzz.sh).
import GeomonCore

#if canImport(Glibc)
import Glibc
#endif

/// Stops the run with a message libFuzzer keeps beside the crashing input.
func violation(_ message: String) -> Never {
    let text = Array("FUZZ INVARIANT VIOLATED: \(message)\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// What every fix from every reader must satisfy: a finite, in-range coordinate, a finite
/// non-negative accuracy, and finite speed/course when present.
func checkFix(_ fix: Fix, _ context: String) {
    let c = fix.coordinate
    guard c.latitude.isFinite, c.longitude.isFinite, abs(c.latitude) <= 90, abs(c.longitude) <= 180 else {
        violation("\(context): coordinate out of range \(c)")
    }
    let a = fix.horizontalAccuracyMeters
    guard a.isFinite, a >= 0 else { violation("\(context): accuracy \(a) at \(c)") }
    if let s = fix.speedMetersPerSecond, !s.isFinite { violation("\(context): speed \(s)") }
    if let d = fix.courseDegrees, !d.isFinite { violation("\(context): course \(d)") }
}

func checkFixes(_ fixes: [Fix], _ context: String) {
    for fix in fixes { checkFix(fix, context) }
}

/// Skip counters are counts: never negative.
func checkSkipped(_ skipped: [String: Int], _ context: String) {
    for (reason, n) in skipped where n < 0 { violation("\(context): skipped[\(reason)] = \(n)") }
}

/// A deterministic generator seeded from the input, so one input always splits the same way.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// FNV-1a over the input: the seed for chunk splits.
func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    var h: UInt64 = 0xCBF2_9CE4_8422_2325
    for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
    return h
}

/// Splits `bytes` into chunks of 0…`maxChunk` bytes (empty chunks included: a reader must
/// accept them), driven by the input's own hash.
func randomChunks(_ bytes: UnsafeBufferPointer<UInt8>, maxChunk: Int) -> [[UInt8]] {
    var rng = SplitMix64(seed: fnv1a(bytes))
    var chunks: [[UInt8]] = []
    var i = 0
    while i < bytes.count {
        let n = Int.random(in: 0...maxChunk, using: &rng)
        let e = min(bytes.count, i + n)
        chunks.append(Array(bytes[i..<e]))
        i = e
    }
    return chunks
}

/// The longest run of bytes between line terminators (LF, CR, and NUL when `nulEndsLine`).
func longestLine(_ bytes: UnsafeBufferPointer<UInt8>, nulEndsLine: Bool) -> Int {
    var longest = 0, run = 0
    for b in bytes {
        if b == 10 || b == 13 || (nulEndsLine && b == 0) { run = 0 } else { run += 1; longest = max(longest, run) }
    }
    return longest
}

/// What every fence a loader returns must satisfy: a usable shape with valid coordinates.
func checkFence(_ fence: Fence, _ context: String) {
    guard let shape = fence.shape else { violation("\(context): fence '\(fence.id)' has no shape") }
    checkShape(shape, "\(context): fence '\(fence.id)'")
}

func checkShape(_ shape: FenceShape, _ context: String) {
    switch shape {
    case .circle(let center, let radius):
        guard center.isValid else { violation("\(context): centre \(center)") }
        guard radius.isFinite, radius > 0 else { violation("\(context): radius \(radius)") }
    case .polygons(let polygons):
        guard !polygons.isEmpty else { violation("\(context): no polygon") }
        for p in polygons {
            guard p.shell.count >= 3 else { violation("\(context): shell of \(p.shell.count) points") }
            for c in p.shell where !c.isValid { violation("\(context): vertex \(c)") }
            for h in p.holes {
                for c in h where !c.isValid { violation("\(context): hole vertex \(c)") }
            }
        }
    case .corridor(let lines, let width):
        guard !lines.isEmpty, width.isFinite, width > 0 else { violation("\(context): corridor of \(lines.count) lines, width \(width)") }
        for line in lines {
            guard line.count >= 2 else { violation("\(context): corridor line of \(line.count) points") }
            for c in line where !c.isValid { violation("\(context): corridor vertex \(c)") }
        }
    }
}

/// Diagnostics say something, and point at a real line and column when they point at all
/// (given as message and position, so this file needs no configuration module).
func checkDiagnostics(_ diagnostics: [(message: String, location: SourceLocation?)], _ context: String) {
    for d in diagnostics {
        if d.message.isEmpty { violation("\(context): empty diagnostic message") }
        if let l = d.location, l.line < 1 || l.column < 1 { violation("\(context): diagnostic at \(l): \(d.message)") }
    }
}
