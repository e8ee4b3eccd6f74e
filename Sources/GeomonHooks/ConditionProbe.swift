public import GeomonCore
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Checks the conditions a hook may wait for (`when: {network, external_power}`) from the
/// kernel's own files. The roots are configurable so tests can fake them with temp dirs.
public struct ConditionProbe: Sendable {
    /// Normally `/proc`; read: `net/route`, `net/ipv6_route`.
    public var procRoot: String
    /// Normally `/sys`; read: `class/power_supply/*/{type,online,scope}`.
    public var sysRoot: String

    public init(procRoot: String = "/proc", sysRoot: String = "/sys") {
        self.procRoot = procRoot
        self.sysRoot = sysRoot
    }

    /// True when every requested condition holds.
    public func satisfied(_ conditions: HookConditions) -> Bool {
        if conditions.network && !hasDefaultRoute() { return false }
        if conditions.externalPower && !externalPowerOnline() { return false }
        return true
    }

    /// An IPv4 or IPv6 default route is up.
    public func hasDefaultRoute() -> Bool {
        if let text = readSmallFile(procRoot + "/net/route"), ConditionProbe.ipv4HasDefaultRoute(text) { return true }
        if let text = readSmallFile(procRoot + "/net/ipv6_route"), ConditionProbe.ipv6HasDefaultRoute(text) { return true }
        return false
    }

    /// A mains or USB supply is online — or the machine reports no power supply of its own (a
    /// desktop, server or Raspberry Pi without a battery gauge is on external power; a wireless
    /// mouse's battery, `scope` `Device`, is no supply of the machine's).
    public func externalPowerOnline() -> Bool {
        let dir = sysRoot + "/class/power_supply"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return true }
        var supplies: [(type: String, online: String?)] = []
        for name in names.sorted() {
            guard let type = readSmallFile("\(dir)/\(name)/type") else { continue }
            if readSmallFile("\(dir)/\(name)/scope").map({ String($0.trimmingWhitespace()) }) == "Device" { continue }
            supplies.append((type, readSmallFile("\(dir)/\(name)/online")))
        }
        return ConditionProbe.externalPowerOnline(supplies: supplies)
    }

    // MARK: - Pure parsers

    private static let rtfUp: UInt32 = 0x0001
    private static let rtfReject: UInt32 = 0x0200

    /// `/proc/net/route`: a row with Destination `00000000`, Mask `00000000` and RTF_UP.
    public static func ipv4HasDefaultRoute(_ text: String) -> Bool {
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000",
                  let flags = UInt32(fields[3], radix: 16) else { continue }
            if flags & rtfUp != 0 && flags & rtfReject == 0 { return true }
        }
        return false
    }

    /// `/proc/net/ipv6_route`: a `::/0` row with RTF_UP, not a reject route, not on `lo`.
    public static func ipv6HasDefaultRoute(_ text: String) -> Bool {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 10, fields[0] == String(repeating: "0", count: 32), fields[1] == "00",
                  let flags = UInt32(fields[8], radix: 16), fields[9] != "lo" else { continue }
            if flags & rtfUp != 0 && flags & rtfReject == 0 { return true }
        }
        return false
    }

    /// Decides from (`type`, `online`) pairs of `/sys/class/power_supply/*`, by the rule modes
    /// decide by (`PowerSupplyReading.externalPowerOnline`).
    public static func externalPowerOnline(supplies: [(type: String, online: String?)]) -> Bool {
        PowerSupplyReading.externalPowerOnline(supplies: supplies)
    }
}

/// Reads a small text file (procfs/sysfs report size 0, so read until EOF); nil if unreadable.
func readSmallFile(_ path: String, limit: Int = 1 << 20) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16384)
    while bytes.count < limit {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        if count < 0 { return nil }
        if count == 0 { break }
        bytes.append(contentsOf: buffer[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}
