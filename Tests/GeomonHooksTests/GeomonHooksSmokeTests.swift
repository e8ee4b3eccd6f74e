import GeomonHooks
import Testing

struct GeomonHooksSmokeTests {
    @Test func moduleLinks() {
        #expect(GeomonHooksInfo.name == "GeomonHooks")
    }
}
