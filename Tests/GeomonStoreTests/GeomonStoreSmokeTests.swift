import GeomonStore
import Testing

struct GeomonStoreSmokeTests {
    @Test func moduleLinks() {
        #expect(GeomonStoreInfo.name == "GeomonStore")
    }
}
