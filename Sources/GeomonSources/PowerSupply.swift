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
        guard let battery = supplies(in: directory)?.first(where: { $0.batteryCapacity != nil }),
              let capacity = battery.batteryCapacity else { return nil }
        let state: BatteryStatus.State = switch battery.status {
        case "Charging": .charging
        case "Full": .full
        case "Discharging": .unplugged
        default: .unknown
        }
        return BatteryStatus(percent: capacity, state: state)
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

// MARK: - The reading the modes decide on

extension PowerSupply {
    /// One supply of the class as its attributes read (trimmed; nil: missing or unreadable).
    public struct Attributes: Hashable, Sendable {
        /// The supply's name in the class (`BAT0`, `AC`, `max17040`).
        public var name: String
        /// `type`: `Battery`, `Mains`, `USB`, `USB_PD`, `Wireless`, …
        public var type: String
        /// `scope`: `Device` for a peripheral's own battery (a mouse, a headset).
        public var scope: String?
        /// `online` of a mains or USB supply: `1` while it supplies (`2`: a programmable USB
        /// supply, USB-PD, online too).
        public var online: String?
        /// `capacity` of a battery, percent.
        public var capacity: String?
        /// `status` of a battery: `Charging`, `Discharging`, `Full`, …
        public var status: String?

        public init(name: String, type: String, scope: String? = nil, online: String? = nil, capacity: String? = nil, status: String? = nil) {
            self.name = name
            self.type = type
            self.scope = scope
            self.online = online
            self.capacity = capacity
            self.status = status
        }

        /// A mains or USB supply (`Mains`, `USB`, `USB_C`, `USB_PD`, …).
        public var isExternal: Bool { PowerSupplyReading.isExternal(type: type) }

        /// The capacity of the device's battery: a `Battery` that is not a peripheral's
        /// (`scope` `Device`) with a whole-number `capacity` of at least 0; nil for any other
        /// supply.
        public var batteryCapacity: Int? {
            guard isSystemBattery else { return nil }
            return capacity.flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
        }

        /// A `Battery` of the machine's own (not a peripheral's, `scope` `Device`).
        public var isSystemBattery: Bool { type == "Battery" && scope != "Device" }
    }

    /// What the power-supply class says now: the battery's capacity (the battery `battery(in:)`
    /// chooses) and whether external power is online. A directory without supplies (or none at
    /// all) is a machine without a gauge, on external power: online, no capacity.
    public static func reading(in directory: String = defaultDirectory, lastCapacity: Int? = nil) -> PowerSupplyReading {
        reading(of: supplies(in: directory) ?? [], lastCapacity: lastCapacity)
    }

    /// The reading from the supplies' attributes (pure): external power by the one rule
    /// (`PowerSupplyReading.externalPowerOnline`, which hooks' `when: {external_power}` uses
    /// too) over the machine's own supplies (a peripheral's, `scope` `Device`, says nothing of
    /// them); the capacity of the first battery by name that is the device's
    /// (`Attributes.batteryCapacity`), clamped to 0–100.
    /// A gauge's failed read — a battery of the machine's there, none with a capacity to read
    /// (an I²C gauge's EIO, `Unknown`, a negative figure) — is no change: `lastCapacity`, the
    /// last one read, stands (a battery taken out leaves no entry).
    public static func reading(of supplies: [Attributes], lastCapacity: Int? = nil) -> PowerSupplyReading {
        let sorted = supplies.sorted { $0.name < $1.name }
        let read = sorted.lazy.compactMap(\.batteryCapacity).first
        let capacity = read ?? (sorted.contains(where: \.isSystemBattery) ? lastCapacity : nil)
        let own = sorted.filter { $0.scope != "Device" }
        let online = PowerSupplyReading.externalPowerOnline(supplies: own.map { ($0.type, $0.online) })
        return PowerSupplyReading(capacity: capacity.map { min(max($0, 0), 100) }, online: online)
    }

    /// The supplies under `directory` (those with a readable `type`), sorted by name; nil when
    /// the directory cannot be read. Only the attributes the reading needs are read: `online`
    /// of mains and USB supplies, `scope` and `capacity` of batteries.
    public static func supplies(in directory: String) -> [Attributes]? {
        guard let names = entries(in: directory) else { return nil }
        var supplies: [Attributes] = []
        for name in names {
            let base = directory + "/" + name + "/"
            guard let type = read(base + "type") else { continue }
            var supply = Attributes(name: name, type: type)
            if supply.isExternal {
                supply.online = read(base + "online")
            } else if type == "Battery" {
                supply.scope = read(base + "scope")
                supply.capacity = read(base + "capacity")
                supply.status = read(base + "status")
            }
            supplies.append(supply)
        }
        return supplies
    }

    /// The names in `directory` (no dot files), sorted; nil when it cannot be opened.
    static func entries(in directory: String) -> [String]? {
        guard let dir = opendir(directory) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }
}
