#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore

/// The device's battery from the kernel's power-supply class (`/sys/class/power_supply`), as
/// the OwnTracks apps report it: the first supply (by name) whose `type` is `Battery` and
/// whose `scope` is not `Device` (a mouse's or a headset's battery), its `capacity` in percent
/// and its `status` (`Charging` → charging, `Full` → full, `Discharging` → unplugged, anything
/// else → unknown). A Raspberry Pi UPS hat with a fuel-gauge driver, a laptop and a phone have
/// one; most single-board computers have none, and then nothing is reported.
public enum PowerSupply {
    public static let defaultDirectory = "/sys/class/power_supply"

    /// The battery now, nil when there is none (or it reports no capacity).
    public static func battery(in directory: String = defaultDirectory) -> BatteryStatus? {
        guard let dir = opendir(directory) else { return nil }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        closedir(dir)
        for name in names.sorted() {
            let base = directory + "/" + name + "/"
            guard read(base + "type") == "Battery", read(base + "scope") != "Device",
                  let capacity = read(base + "capacity").flatMap({ Int($0) }) else { continue }
            let state: BatteryStatus.State = switch read(base + "status") {
            case "Charging": .charging
            case "Full": .full
            case "Discharging": .unplugged
            default: .unknown
            }
            return BatteryStatus(percent: capacity, state: state)
        }
        return nil
    }

    /// A small sysfs attribute, trimmed; nil when missing or unreadable.
    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[..<n], as: UTF8.self)
        return String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
