import Foundation
import GeomonConfig
import GeomonCore
import GeomonFormat
import GeomonTestSupport
import Testing

/// GeoJSON inputs that once crashed the reader (`Tests/Fixtures/fuzz-regressions/geojson`,
/// SOURCE.md there): each reads without a crash, with positioned diagnostics, and every
/// fence it gives indexes.
struct FuzzRegressionTests {
    static let cases: [String] = {
        let dir = TestSupport.fixture("fuzz-regressions/geojson")
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { !$0.hasSuffix(".md") }.sorted()
    }()

    @Test func regressionInputsArePresent() {
        #expect(Self.cases.count >= 2)
    }

    @Test(arguments: cases)
    func regressionInputReadsCleanly(_ name: String) throws {
        let bytes = [UInt8](try Data(contentsOf: TestSupport.fixture("fuzz-regressions/geojson/\(name)")))
        for strict in [false, true] {
            let read = GeoJSONFences.read(bytes, file: name, options: .init(strict: strict))
            #expect(read.diagnostics.allSatisfy { !$0.message.isEmpty && ($0.location.map { $0.line >= 1 && $0.column >= 1 } ?? true) })
            _ = FenceIndex(shapes: read.fences.compactMap(\.shape))
        }
    }

    @Test(arguments: [(1e300, "1e+300"), (-5e18, "-5000000000000000000"), (1e15, "1000000000000000"), (123456789012345680.0, "123456789012345680"), (1e21, "1e+21")])
    func hugeNumbersHaveText(value: Double, text: String) {
        #expect(NumberText.shortest(value) == text)
    }
}
