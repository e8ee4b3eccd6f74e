import GeomonCore
import GeomonHooks
import GeomonTestSupport
import Testing

struct ConditionProbeTests {
    static let header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"

    @Test func ipv4DefaultRouteNeedsZeroDestinationZeroMaskAndUp() {
        #expect(ConditionProbe.ipv4HasDefaultRoute(Self.header + "wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"))
        #expect(!ConditionProbe.ipv4HasDefaultRoute(Self.header + "wlan0\t00000000\t0101A8C0\t0002\t0\t0\t600\t00000000\t0\t0\t0\n"))
        #expect(!ConditionProbe.ipv4HasDefaultRoute(Self.header + "wlan0\t0001A8C0\t00000000\t0001\t0\t0\t600\t00FFFFFF\t0\t0\t0\n"))
        #expect(!ConditionProbe.ipv4HasDefaultRoute(Self.header))
        #expect(!ConditionProbe.ipv4HasDefaultRoute("garbage"))
    }

    @Test func ipv6DefaultRouteIgnoresLoopbackRejectRoutes() {
        let zero = String(repeating: "0", count: 32)
        let reject = "\(zero) 00 \(zero) 00 \(zero) ffffffff 00000001 00000000 00200200       lo\n"
        let real = "\(zero) 00 \(zero) 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003     eth0\n"
        #expect(!ConditionProbe.ipv6HasDefaultRoute(reject))
        #expect(ConditionProbe.ipv6HasDefaultRoute(reject + real))
    }

    @Test func externalPowerNeedsAnOnlineMainsOrUSBSupply() {
        #expect(ConditionProbe.externalPowerOnline(supplies: [("Mains\n", "1\n")]))
        #expect(ConditionProbe.externalPowerOnline(supplies: [("Battery", nil), ("USB_PD", "1")]))
        #expect(!ConditionProbe.externalPowerOnline(supplies: [("Battery", nil), ("Mains", "0")]))
        // 2: a programmable USB supply (USB-PD), online.
        #expect(ConditionProbe.externalPowerOnline(supplies: [("Battery", nil), ("USB", "2")]))
        #expect(!ConditionProbe.externalPowerOnline(supplies: [("Battery", "1")]))
        // No power-supply class at all: a mains-powered machine without a gauge.
        #expect(ConditionProbe.externalPowerOnline(supplies: []))
    }

    @Test func probeReadsFakeRootsAndIPv6AloneCounts() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let probe = ConditionProbe(procRoot: root.path("proc"), sysRoot: root.path("sys"))
        _ = try root.write("sys/class/power_supply/BAT0/type", "Battery\n")
        #expect(!probe.satisfied(HookConditions(network: true)))
        #expect(!probe.satisfied(HookConditions(externalPower: true)))
        #expect(probe.satisfied(HookConditions()))
        let zero = String(repeating: "0", count: 32)
        _ = try root.write("proc/net/ipv6_route", "\(zero) 00 \(zero) 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003     eth0\n")
        #expect(probe.satisfied(HookConditions(network: true)))
    }

    /// A desktop whose only supply is a wireless mouse's battery (`scope` `Device`) has no
    /// supply of its own: on external power, as without any.
    @Test func aPeripheralsBatteryIsNoSupplyOfTheMachines() throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let probe = ConditionProbe(procRoot: root.path("proc"), sysRoot: root.path("sys"))
        _ = try root.write("sys/class/power_supply/hidpp_battery_0/type", "Battery\n")
        _ = try root.write("sys/class/power_supply/hidpp_battery_0/scope", "Device\n")
        #expect(probe.satisfied(HookConditions(externalPower: true)))
        _ = try root.write("sys/class/power_supply/BAT0/type", "Battery\n")
        #expect(!probe.satisfied(HookConditions(externalPower: true)))
    }
}
