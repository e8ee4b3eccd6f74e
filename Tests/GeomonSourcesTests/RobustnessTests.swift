import Foundation
import GeomonCore
import GeomonSources
import GeomonTestSupport
import Testing

/// A small deterministic generator (SplitMix64) so failures reproduce.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Mutated real input never crashes a reader, and whatever comes out is a valid fix.
struct RobustnessTests {
    @Test(arguments: ["tracks/nl2008u.log", "tracks/georust_garmin_with_extensions.gpx", "tracks/tomtom-mkII.log.chk-gpsd3.22"])
    func mutatedInputGivesOnlyValidFixes(file: String) throws {
        let original = [UInt8](try Data(contentsOf: TestSupport.fixture(file)).prefix(20_000))
        var rng = SplitMix64(state: 42)
        for round in 0..<200 {
            var bytes = original
            for _ in 0..<(1 + round % 40) {
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[i] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.remove(at: i)
                case 2: bytes.insert(contentsOf: [0, 13, 10, 36, 42, 60, 123, 34][Int.random(in: 0..<8, using: &rng)...].prefix(1), at: i)
                default: bytes.removeSubrange(i..<min(bytes.count, i + Int.random(in: 1...200, using: &rng)))
                }
                if bytes.isEmpty { bytes = [10] }
            }
            guard let track = try? TrackReader.read(bytes: bytes, name: "mutated") else { continue }
            #expect(track.fixes.allSatisfy { $0.coordinate.isValid && $0.horizontalAccuracyMeters.isFinite && $0.horizontalAccuracyMeters >= 0 })
        }
    }

    @Test func randomBytesInSmallChunksDoNotCrashTheNMEAParser() {
        var rng = SplitMix64(state: 7)
        var parser = NMEAParser()
        var fixes: [Fix] = []
        for _ in 0..<2000 {
            let chunk = (0..<Int.random(in: 0...300, using: &rng)).map { _ in
                Bool.random(using: &rng) ? UInt8.random(in: 0...255, using: &rng) : Array("$GPGGA,1234.5*,NE\r\n".utf8).randomElement(using: &rng) ?? 0
            }
            fixes += parser.feed(chunk)
        }
        fixes += parser.finish()
        #expect(fixes.allSatisfy { $0.coordinate.isValid })
        #expect(parser.skipped.values.reduce(0, +) > 0)
    }
}
