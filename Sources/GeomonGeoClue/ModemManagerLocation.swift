#if canImport(Glibc)
import Glibc
#endif
import CSystemd

/// `sources.gnss.power: modemmanager`: the GNSS engine inside a cellular modem (a PinePhone's
/// EG25, a router's Quectel or Sierra module), switched through ModemManager's
/// `org.freedesktop.ModemManager1.Modem.Location.Setup(u sources, b signal_location)` on the
/// system bus. Off clears the GNSS sources from the modem's enabled set (raw, NMEA, unmanaged,
/// MS-assisted, MS-based) and keeps the rest (3GPP cell ids, CDMA base station); on adds back
/// the GNSS sources that were enabled before the switch-off, or `gps-unmanaged` (16) when none
/// were, which starts the engine and leaves its NMEA port to gpsd. `SignalsLocation` is kept.
///
/// Each call is synchronous with sd-bus's default timeout (25 s), like the `command` method's
/// programs; the modem is the profile's D-Bus path or else the first modem ModemManager lists.
/// One instance belongs to one switch and is called from its owner's thread only (the sources
/// it cleared are remembered between calls), hence `@unchecked Sendable`.
public final class ModemManagerLocation: @unchecked Sendable {
    public static let service = "org.freedesktop.ModemManager1"
    static let modemsPath = "/org/freedesktop/ModemManager1/Modem"
    static let location = "org.freedesktop.ModemManager1.Modem.Location"
    /// MMModemLocationSource bits of the GNSS engine: GPS_RAW 2, GPS_NMEA 4, GPS_UNMANAGED 16,
    /// AGPS_MSA 32, AGPS_MSB 64.
    public static let gnssSources: UInt32 = 2 | 4 | 16 | 32 | 64
    public static let unmanaged: UInt32 = 16

    private let modem: String?
    private let busAddress: String?
    private var restore: UInt32?

    /// - Parameters:
    ///   - modem: the modem's object path (`/org/freedesktop/ModemManager1/Modem/0`); nil: the
    ///     first one ModemManager lists.
    ///   - busAddress: a D-Bus address (`unix:path=…`); nil: the system bus
    ///     (`DBUS_SYSTEM_BUS_ADDRESS`, else /run/dbus/system_bus_socket).
    public init(modem: String?, busAddress: String? = nil) {
        self.modem = modem
        self.busAddress = busAddress
    }

    /// Switches the modem's GNSS off or on; returns what was done.
    public func set(on: Bool) throws(GeoClueError) -> String {
        let bus = try open()
        defer { sd_bus_flush_close_unref(bus) }
        let path: String
        if let modem { path = modem } else { path = try firstModem(bus) }
        let enabled: UInt32 = try property(bus, path, "Enabled", type: SD_BUS_TYPE_UINT32)
        let signals: Int32 = try property(bus, path, "SignalsLocation", type: SD_BUS_TYPE_BOOLEAN)
        let sources: UInt32
        if on {
            sources = enabled | (restore ?? Self.unmanaged)
        } else {
            if enabled & Self.gnssSources != 0 { restore = enabled & Self.gnssSources }
            sources = enabled & ~Self.gnssSources
        }
        try setup(bus, path, sources: sources, signals: signals != 0)
        return "Location.Setup(\(sources), \(signals != 0)) on \(path) (enabled was \(enabled))"
    }

    private func open() throws(GeoClueError) -> OpaquePointer {
        var b: OpaquePointer?
        var r: Int32
        if let busAddress {
            r = sd_bus_new(&b)
            if r >= 0 { r = sd_bus_set_address(b, busAddress) }
            if r >= 0 { r = sd_bus_set_bus_client(b, 1) }
            if r >= 0 { r = sd_bus_start(b) }
            if r < 0 { sd_bus_unref(b) }
        } else {
            r = sd_bus_open_system_with_description(&b, "geomon")
        }
        guard r >= 0, let b else {
            throw GeoClueError("cannot connect to the D-Bus system bus: \(GeoClueSource.errno(r)) (is dbus running? geomon reads DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket)")
        }
        return b
    }

    private func firstModem(_ bus: OpaquePointer) throws(GeoClueError) -> String {
        let xml = try call(bus, Self.modemsPath, "org.freedesktop.DBus.Introspectable", "Introspect",
                           failure: { "ModemManager lists no modems: \($0) (is ModemManager running? set sources.gnss.power.modem)" },
                           read: { GeoClueSource.readString($0, type: "s") ?? "" })
        // Child nodes: <node name="0"/> (the root node may carry its own path as its name).
        for part in xml.split(separator: "<node name=\"").dropFirst() {
            guard let end = part.firstIndex(of: "\"") else { continue }
            let name = part[..<end]
            if !name.isEmpty, !name.contains("/") { return "\(Self.modemsPath)/\(name)" }
        }
        throw GeoClueError("ModemManager has no modem (nothing under \(Self.modemsPath))")
    }

    private func property<T: FixedWidthInteger>(_ bus: OpaquePointer, _ path: String, _ name: String, type: Int) throws(GeoClueError) -> T {
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var value: T = 0
        let r = withUnsafeMutablePointer(to: &value) {
            sd_bus_get_property_trivial(bus, Self.service, path, Self.location, name, &error, GeoClueSource.type(type), $0)
        }
        guard r >= 0 else { throw GeoClueError("cannot read \(name) of \(path): \(Self.describe(error, r))") }
        return value
    }

    private func setup(_ bus: OpaquePointer, _ path: String, sources: UInt32, signals: Bool) throws(GeoClueError) {
        var s = sources
        var flag: Int32 = signals ? 1 : 0
        try call(bus, path, Self.location, "Setup", fill: { m in
            var r = sd_bus_message_append_basic(m, GeoClueSource.type(SD_BUS_TYPE_UINT32), &s)
            if r >= 0 { r = sd_bus_message_append_basic(m, GeoClueSource.type(SD_BUS_TYPE_BOOLEAN), &flag) }
            return r
        }, failure: { "Location.Setup(\(sources)) on \(path) failed: \($0)" }, read: { _ in () })
    }

    /// One blocking method call to ModemManager: `fill` appends the arguments, `read` reads
    /// the reply; a failure's D-Bus error text goes through `failure`.
    private func call<T>(_ bus: OpaquePointer, _ path: String, _ interface: String, _ member: String,
                         fill: (OpaquePointer?) -> Int32 = { _ in 0 }, failure: (String) -> String,
                         read: (OpaquePointer?) -> T) throws(GeoClueError) -> T {
        var m: OpaquePointer?
        var r = sd_bus_message_new_method_call(bus, &m, Self.service, path, interface, member)
        defer { sd_bus_message_unref(m) }
        if r >= 0 { r = fill(m) }
        guard r >= 0 else { throw GeoClueError("cannot build \(member): \(GeoClueSource.errno(r))") }
        var error = sd_bus_error()
        var reply: OpaquePointer?
        r = sd_bus_call(bus, m, 0, &error, &reply)
        defer { sd_bus_message_unref(reply); sd_bus_error_free(&error) }
        guard r >= 0 else { throw GeoClueError(failure(Self.describe(error, r))) }
        return read(reply)
    }

    static func describe(_ error: sd_bus_error, _ r: Int32) -> String {
        if let message = error.message { return String(cString: message) }
        if let name = error.name { return String(cString: name) }
        return GeoClueSource.errno(r)
    }
}
