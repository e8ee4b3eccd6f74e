import GeomonDaemon
import Testing

struct GeomonDaemonSmokeTests {
    @Test func moduleLinks() {
        #expect(GeomonDaemonInfo.name == "GeomonDaemon")
    }
}
