import GeomonSources
import Testing

struct GeomonSourcesSmokeTests {
    @Test func moduleLinks() {
        #expect(GeomonSourcesInfo.name == "GeomonSources")
    }
}
