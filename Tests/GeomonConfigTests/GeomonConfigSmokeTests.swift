import GeomonConfig
import Testing

struct GeomonConfigSmokeTests {
    @Test func moduleLinks() {
        #expect(GeomonConfigInfo.name == "GeomonConfig")
    }
}
