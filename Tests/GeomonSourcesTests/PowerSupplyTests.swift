import Foundation
import GeomonCore
import GeomonSources
import GeomonTestSupport
import Testing

/// The battery from a directory laid out like `/sys/class/power_supply`.
struct PowerSupplyTests {
    static func supply(_ dir: TemporaryDirectory, _ name: String, _ attributes: [String: String]) throws {
        for (file, value) in attributes { _ = try dir.write("\(name)/\(file)", value + "\n") }
    }

    @Test func theFirstSystemBatteryIsReportedWithItsState() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // A mains adapter, a wireless mouse's battery (scope Device), and the device's own.
        try Self.supply(dir, "AC", ["type": "Mains", "online": "1"])
        try Self.supply(dir, "hid-mouse-battery", ["type": "Battery", "scope": "Device", "capacity": "12", "status": "Discharging"])
        try Self.supply(dir, "max17040", ["type": "Battery", "capacity": "57", "status": "Discharging"])
        #expect(PowerSupply.battery(in: dir.path("")) == BatteryStatus(percent: 57, state: .unplugged))
        for (status, state) in [("Charging", BatteryStatus.State.charging), ("Full", .full), ("Not charging", .unknown), ("Unknown", .unknown)] {
            try Self.supply(dir, "max17040", ["status": status])
            #expect(PowerSupply.battery(in: dir.path(""))?.state == state, "\(status)")
        }
    }

    @Test func noBatteryNoReport() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(PowerSupply.battery(in: dir.path("")) == nil)
        try Self.supply(dir, "AC", ["type": "Mains"])
        try Self.supply(dir, "BAT0", ["type": "Battery", "status": "Full"])  // no capacity
        #expect(PowerSupply.battery(in: dir.path("")) == nil)
        #expect(PowerSupply.battery(in: "/nonexistent/power_supply") == nil)
    }
}
