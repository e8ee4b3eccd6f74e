import Foundation
#if canImport(Glibc)
import Glibc
#endif
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

    // MARK: - The reading for `modes:`

    @Test func theReadingHasTheBatterysCapacityAndWhetherMainsOrUSBIsOnline() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try Self.supply(dir, "AC", ["type": "Mains", "online": "1"])
        try Self.supply(dir, "max17040", ["type": "Battery", "capacity": "57", "status": "Charging"])
        #expect(PowerSupply.reading(in: dir.path("")) == PowerSupplyReading(capacity: 57, online: true))
        try Self.supply(dir, "AC", ["online": "0"])
        try Self.supply(dir, "max17040", ["status": "Discharging"])
        #expect(PowerSupply.reading(in: dir.path("")) == PowerSupplyReading(capacity: 57, online: false))
        // Any USB type counts as external power, as mains does.
        try Self.supply(dir, "usb-c", ["type": "USB_PD", "online": "1"])
        #expect(PowerSupply.reading(in: dir.path("")) == PowerSupplyReading(capacity: 57, online: true))
    }

    @Test func aBatteryAloneDischargingIsNotExternalPower() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try Self.supply(dir, "BAT0", ["type": "Battery", "capacity": "50", "status": "Discharging"])
        #expect(PowerSupply.reading(in: dir.path("")) == PowerSupplyReading(capacity: 50, online: false))
    }

    @Test func noSuppliesIsAMachineOnExternalPowerWithoutAGauge() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(PowerSupply.reading(in: dir.path("")) == PowerSupplyReading(capacity: nil, online: true))
        #expect(PowerSupply.reading(in: "/nonexistent/power_supply") == PowerSupplyReading(capacity: nil, online: true))
        // A directory without a readable `type` is no supply.
        _ = try dir.write("stray/capacity", "10\n")
        #expect(PowerSupply.reading(in: dir.path("")) == PowerSupplyReading(capacity: nil, online: true))
    }

    @Test func aDeviceScopeBatteryGivesNoCapacity() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // A mouse's battery sorts first; the device's own is the one read.
        try Self.supply(dir, "hid-mouse-battery", ["type": "Battery", "scope": "Device", "capacity": "12", "status": "Discharging"])
        try Self.supply(dir, "max17040", ["type": "Battery", "capacity": "57", "status": "Discharging"])
        #expect(PowerSupply.reading(in: dir.path("")).capacity == 57)
        // Beside a wireless charger that is not online: no capacity, not on external power.
        try Self.supply(dir, "max17040", ["type": "Wireless"])
        #expect(PowerSupply.reading(in: dir.path("")) == PowerSupplyReading(capacity: nil, online: false))
        // The mouse's battery alone: no capacity, and no supply of the machine's own: a desktop
        // on external power (the rule hooks' `when: {external_power}` decides by).
        try FileManager.default.removeItem(atPath: dir.path("max17040"))
        #expect(PowerSupply.reading(in: dir.path("")) == PowerSupplyReading(capacity: nil, online: true))
    }

    @Test func theReadingRuleOnAttributes() {
        typealias A = PowerSupply.Attributes
        #expect(PowerSupply.reading(of: []) == PowerSupplyReading(capacity: nil, online: true))
        #expect(PowerSupply.reading(of: [A(name: "BAT1", type: "Battery", capacity: "40"), A(name: "BAT0", type: "Battery", capacity: "104")])
                == PowerSupplyReading(capacity: 100, online: false))
        #expect(PowerSupply.reading(of: [A(name: "BAT0", type: "Battery", capacity: "n/a"), A(name: "BAT1", type: "Battery", capacity: "40")]).capacity == 40)
        #expect(PowerSupply.reading(of: [A(name: "AC", type: "Mains"), A(name: "USB", type: "USB", online: "1")]).online == true)
        #expect(PowerSupply.reading(of: [A(name: "AC", type: "Mains", online: "0")]).online == false)
        // A gauge's failed read (the battery there, no capacity to read) keeps the last one;
        // a battery taken out reads none.
        #expect(PowerSupply.reading(of: [A(name: "BAT0", type: "Battery", capacity: "Unknown")], lastCapacity: 21).capacity == 21)
        #expect(PowerSupply.reading(of: [A(name: "BAT0", type: "Battery")], lastCapacity: 21).capacity == 21)
        #expect(PowerSupply.reading(of: [A(name: "BAT0", type: "Battery", capacity: "-1")], lastCapacity: 21).capacity == 21)
        #expect(PowerSupply.reading(of: [A(name: "BAT0", type: "Battery", capacity: "-1")]).capacity == nil)
        #expect(PowerSupply.reading(of: [A(name: "AC", type: "Mains", online: "1")], lastCapacity: 21).capacity == nil)
        #expect(PowerSupply.reading(of: [A(name: "mouse", type: "Battery", scope: "Device", capacity: "x")], lastCapacity: 21).capacity == nil)
        // A programmable USB supply (USB-PD) says 2 while it supplies.
        #expect(PowerSupply.reading(of: [A(name: "ucsi-source-psy-USBC000:001", type: "USB", online: "2")]).online == true)
    }

    // MARK: - The watch

    static func readable(_ fd: Int32, within milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    @Test func theWatchSeesAFakeClassChangeThroughInotify() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try Self.supply(dir, "BAT0", ["type": "Battery", "capacity": "50", "status": "Discharging"])
        // No uevents here: the machine's own would speak in the test.
        let watch = try PowerSupplyWatch(directory: dir.path(""), uevents: false)
        #expect(watch.ueventDescriptor == nil && watch.ueventFailure == nil && watch.directoryFailure == nil)
        let fd = try #require(watch.directoryDescriptor)
        #expect(watch.fileDescriptors == [fd])
        try Self.supply(dir, "BAT0", ["capacity": "49"])
        #expect(Self.readable(fd, within: 2000))
        #expect(watch.drain(fd: fd))
        #expect(!Self.readable(fd, within: 300))
        #expect(!watch.drain(fd: fd))
        // A supply that comes later is watched too.
        try Self.supply(dir, "AC", ["type": "Mains", "online": "0"])
        #expect(Self.readable(fd, within: 2000))
        #expect(watch.drain(fd: fd))
        try Self.supply(dir, "AC", ["online": "1"])
        #expect(Self.readable(fd, within: 2000))
        #expect(watch.drain(fd: fd))
        #expect(PowerSupply.reading(in: dir.path("")) == PowerSupplyReading(capacity: 49, online: true))
    }

    @Test func theWatchOpensTheKernelsUeventsOrSaysWhyNot() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let watch = try PowerSupplyWatch(directory: dir.path(""))
        // Containers may refuse the netlink socket; then the reason is kept, not thrown.
        #expect((watch.ueventDescriptor != nil) != (watch.ueventFailure != nil))
        #expect(watch.fileDescriptors.count == (watch.ueventDescriptor == nil ? 1 : 2))
        #expect(!watch.drain(fd: -1))
        #expect(throws: PowerSupplyWatch.Failure.self) {
            _ = try PowerSupplyWatch(directory: "/nonexistent/power_supply", uevents: false)
        }
    }

    @Test func onlyPowerSupplyUeventsCount() {
        func message(_ fields: [String]) -> [UInt8] { Array(fields.joined(separator: "\0").utf8) + [0] }
        #expect(PowerSupplyWatch.isPowerSupplyUevent(message([
            "change@/devices/platform/soc/i2c-1/1-0036/power_supply/max17040", "ACTION=change",
            "DEVPATH=/devices/platform/soc/i2c-1/1-0036/power_supply/max17040", "SUBSYSTEM=power_supply",
            "POWER_SUPPLY_NAME=max17040", "POWER_SUPPLY_CAPACITY=56", "SEQNUM=4711",
        ])))
        #expect(!PowerSupplyWatch.isPowerSupplyUevent(message(["add@/devices/pci0000:00/usb1/1-1", "ACTION=add", "SUBSYSTEM=usb", "SEQNUM=4712"])))
        // The words must be a whole field, after the header.
        #expect(!PowerSupplyWatch.isPowerSupplyUevent(message(["change@/x", "SUBSYSTEM=power_supply_extra"])))
        #expect(!PowerSupplyWatch.isPowerSupplyUevent(message(["SUBSYSTEM=power_supply"])))
        #expect(!PowerSupplyWatch.isPowerSupplyUevent(message(["libudev", "SUBSYSTEM=power_supply"])))
        #expect(!PowerSupplyWatch.isPowerSupplyUevent([UInt8]()))
    }
}
