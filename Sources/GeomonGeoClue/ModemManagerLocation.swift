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
/// Every call is asynchronous (`sd_bus_call_async`), like GeoClueSource's: `request(on:)`
/// starts a switch (the modem's path, `Enabled`, `SignalsLocation`, then `Setup`, each call
/// bounded by `callTimeout`), the caller's loop polls `fileDescriptor` for `pollEvents` and
/// runs `process()` when it is ready or at `timeoutMicroseconds`, and `process()` returns the
/// switches that finished. A request made while one is under way runs after it (only the
/// last one asked for: the modem ends as the caller last wanted). `set(on:)` is the same
/// switch waited for on a poll of its own (`geomon receiver test`). The connection stays open
/// between switches and is opened again after it failed. One instance belongs to one switch and
/// is called from its owner's thread only (the sources it cleared are remembered between
/// calls), hence `@unchecked Sendable`.
public final class ModemManagerLocation: @unchecked Sendable {
    public static let service = "org.freedesktop.ModemManager1"
    static let modemsPath = "/org/freedesktop/ModemManager1/Modem"
    static let location = "org.freedesktop.ModemManager1.Modem.Location"
    static let properties = "org.freedesktop.DBus.Properties"
    /// MMModemLocationSource bits of the GNSS engine: GPS_RAW 2, GPS_NMEA 4, GPS_UNMANAGED 16,
    /// AGPS_MSA 32, AGPS_MSB 64.
    public static let gnssSources: UInt32 = 2 | 4 | 16 | 32 | 64
    public static let unmanaged: UInt32 = 16
    /// sd-bus's own default for a method call: a modem that does not answer within it fails
    /// the switch (the loop goes on meanwhile).
    public static let defaultCallTimeout: Duration = .seconds(25)

    /// A switch that finished: what was asked, and what was done or why it failed.
    public struct Completion: Sendable {
        public var on: Bool
        public var result: Result<String, GeoClueError>
    }

    private let modem: String?
    private let busAddress: String?
    private let callTimeout: Duration
    private var bus: OpaquePointer?
    private var restore: UInt32?
    /// The switch under way, and the one asked for after it.
    private var current: Switch?
    private var queued: Bool?
    private var finished: [Completion] = []

    private struct Switch {
        var on: Bool
        var path: String?
        var enabled: UInt32?
    }

    /// - Parameters:
    ///   - modem: the modem's object path (`/org/freedesktop/ModemManager1/Modem/0`); nil: the
    ///     first one ModemManager lists.
    ///   - busAddress: a D-Bus address (`unix:path=…`); nil: the system bus
    ///     (`DBUS_SYSTEM_BUS_ADDRESS`, else /run/dbus/system_bus_socket).
    public init(modem: String?, busAddress: String? = nil, callTimeout: Duration = ModemManagerLocation.defaultCallTimeout) {
        self.modem = modem
        self.busAddress = busAddress
        self.callTimeout = callTimeout
    }

    deinit { close() }

    /// A switch is under way or asked for.
    public var isBusy: Bool { current != nil || queued != nil }

    public var fileDescriptor: Int32? { BusPolling.fileDescriptor(bus) }

    public var pollEvents: Int16 { BusPolling.events(bus) }

    /// When `process()` must run without input (CLOCK_MONOTONIC µs): a call's timeout.
    public var timeoutMicroseconds: UInt64? { current != nil ? BusPolling.timeout(bus) : nil }

    /// Waits on the connection until `deadline` (CLOCK_MONOTONIC µs) or a call's timeout.
    private func wait(until deadline: UInt64) {
        BusPolling.wait(bus, until: deadline)
    }

    /// Switches the modem's GNSS on or off: started now, or after the switch under way.
    public func request(on: Bool) {
        if current != nil {
            queued = on
            return
        }
        begin(on)
    }

    /// Dispatches what the bus has; returns the switches that finished since the last call.
    public func process() -> [Completion] {
        if let bus {
            while true {
                let r = sd_bus_process(bus, nil)
                if r < 0 {
                    let reason = "the D-Bus connection failed: \(GeoClueSource.errno(r))"
                    dropConnection()
                    // The switch under way fails; one asked for after it opens a new connection.
                    if let current { complete(current.on, .failure(GeoClueError(reason))) }
                    break
                }
                if r == 0 { break }
            }
            // A connection the bus ended (dbus restarted: the call under way failed with
            // "Connection terminated") is replaced before the next switch goes out.
            if self.bus != nil, sd_bus_is_open(bus) <= 0 { dropConnection() }
        }
        // The switch asked for behind the one that finished starts now, after the dispatch: from
        // the finished one's reply callback it would go out on a connection ending with it.
        if current == nil, let next = queued {
            queued = nil
            begin(next)
        }
        defer { finished = [] }
        return finished
    }

    /// Closes the connection; the switch under way and the one asked for are forgotten.
    public func close() {
        current = nil
        queued = nil
        dropConnection()
    }

    private func dropConnection() {
        guard let bus else { return }
        self.bus = nil
        BusPolling.close(bus)
    }

    /// Switches and waits for the outcome on a poll of its own (`geomon receiver test`, the
    /// daemon's last switch at shutdown); returns what was done.
    public func set(on: Bool) throws(GeoClueError) -> String {
        request(on: on)
        guard let done = settle(until: .max).last, done.on == on else { throw GeoClueError("the switch ended without an answer") }
        return try done.result.get()
    }

    /// Waits on a poll of its own until no switch is under way or `deadline` (CLOCK_MONOTONIC
    /// µs) passed; the switches that finished meanwhile, in order (the last one is the last
    /// asked for when none is left).
    public func settle(until deadline: UInt64) -> [Completion] {
        var finished = process()
        while isBusy, GeoClueSource.monotonic() < deadline {
            wait(until: deadline)
            finished += process()
        }
        return finished
    }

    // MARK: - One switch

    private func begin(_ on: Bool) {
        current = Switch(on: on, path: modem)
        do {
            try openIfNeeded()
        } catch {
            complete(on, .failure(error))
            return
        }
        if modem == nil { listModems() } else { readEnabled() }
    }

    /// The switch under way ended; the one asked for behind it starts from `process`.
    private func complete(_ on: Bool, _ result: Result<String, GeoClueError>) {
        finished.append(Completion(on: on, result: result))
        current = nil
    }

    private func fail(_ message: String) {
        guard let current else { return }
        complete(current.on, .failure(GeoClueError(message)))
    }

    private func listModems() {
        call(Self.modemsPath, "org.freedesktop.DBus.Introspectable", "Introspect",
             failure: { "ModemManager lists no modems: \($0) (is ModemManager running? set sources.gnss.power.modem)" }) { [self] reply in
            let xml = GeoClueSource.readString(reply, type: "s") ?? ""
            // Child nodes: <node name="0"/> (the root node may carry its own path as its name).
            for part in xml.split(separator: "<node name=\"").dropFirst() {
                guard let end = part.firstIndex(of: "\"") else { continue }
                let name = part[..<end]
                if !name.isEmpty, !name.contains("/") {
                    current?.path = "\(Self.modemsPath)/\(name)"
                    readEnabled()
                    return
                }
            }
            fail("ModemManager has no modem (nothing under \(Self.modemsPath))")
        }
    }

    private func readEnabled() {
        guard let path = current?.path else { return }
        property(path, "Enabled", type: SD_BUS_TYPE_UINT32) { [self] (enabled: UInt32) in
            current?.enabled = enabled
            property(path, "SignalsLocation", type: SD_BUS_TYPE_BOOLEAN) { [self] (signals: Int32) in
                setup(path, enabled: enabled, signals: signals != 0)
            }
        }
    }

    private func setup(_ path: String, enabled: UInt32, signals: Bool) {
        guard let on = current?.on else { return }
        var sources: UInt32
        if on {
            sources = enabled | (restore ?? Self.unmanaged)
        } else {
            if enabled & Self.gnssSources != 0 { restore = enabled & Self.gnssSources }
            sources = enabled & ~Self.gnssSources
        }
        var flag: Int32 = signals ? 1 : 0
        let done = "Location.Setup(\(sources), \(signals)) on \(path) (enabled was \(enabled))"
        call(path, Self.location, "Setup", fill: { m in
            var r = sd_bus_message_append_basic(m, GeoClueSource.type(SD_BUS_TYPE_UINT32), &sources)
            if r >= 0 { r = sd_bus_message_append_basic(m, GeoClueSource.type(SD_BUS_TYPE_BOOLEAN), &flag) }
            return r
        }, failure: { "Location.Setup(\(sources)) on \(path) failed: \($0)" }) { [self] _ in
            complete(on, .success(done))
        }
    }

    /// `org.freedesktop.DBus.Properties.Get` of a property of the Location interface.
    private func property<T: FixedWidthInteger>(_ path: String, _ name: String, type: Int, then: @escaping (T) -> Void) {
        call(path, Self.properties, "Get", fill: { m in
            var r = sd_bus_message_append_basic(m, GeoClueSource.type(SD_BUS_TYPE_STRING), Self.location)
            if r >= 0 { r = sd_bus_message_append_basic(m, GeoClueSource.type(SD_BUS_TYPE_STRING), name) }
            return r
        }, failure: { "cannot read \(name) of \(path): \($0)" }) { [self] reply in
            var value: T = 0
            let signature = String(UnicodeScalar(UInt8(type)))
            guard sd_bus_message_enter_container(reply, GeoClueSource.type(SD_BUS_TYPE_VARIANT), signature) > 0,
                  withUnsafeMutablePointer(to: &value, { sd_bus_message_read_basic(reply, GeoClueSource.type(type), $0) }) > 0 else {
                fail("cannot read \(name) of \(path): the reply is not of type \(signature)")
                return
            }
            then(value)
        }
    }

    private func openIfNeeded() throws(GeoClueError) {
        guard bus == nil else { return }
        let (opened, r) = BusPolling.open(busAddress)
        guard let b = opened else {
            throw GeoClueError("cannot connect to the D-Bus system bus: \(GeoClueSource.errno(r)) (is dbus running? geomon reads DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket)")
        }
        bus = b
    }

    /// The Swift side of one asynchronous call, retained until its reply.
    private final class Pending {
        let reply: (OpaquePointer?) -> Void
        let failure: (String) -> Void
        init(reply: @escaping (OpaquePointer?) -> Void, failure: @escaping (String) -> Void) {
            self.reply = reply
            self.failure = failure
        }
    }

    /// One asynchronous method call to ModemManager: `fill` appends the arguments, `reply`
    /// reads the answer; an error (a timeout included) fails the switch with `failure`'s words.
    private func call(_ path: String, _ interface: String, _ member: String,
                      fill: (OpaquePointer?) -> Int32 = { _ in 0 }, failure: @escaping (String) -> String,
                      reply: @escaping (OpaquePointer?) -> Void) {
        guard let bus else { return }
        var m: OpaquePointer?
        var r = sd_bus_message_new_method_call(bus, &m, Self.service, path, interface, member)
        defer { sd_bus_message_unref(m) }
        if r >= 0 { r = fill(m) }
        guard r >= 0 else { return fail("cannot build \(member): \(GeoClueSource.errno(r))") }
        let box = Unmanaged.passRetained(Pending(reply: reply, failure: { [weak self] in self?.fail(failure($0)) }))
        r = sd_bus_call_async(bus, nil, m, { message, userdata, _ in
            let pending = Unmanaged<Pending>.fromOpaque(userdata!).takeRetainedValue()
            if let error = sd_bus_message_get_error(message) {
                pending.failure(ModemManagerLocation.describe(error.pointee, -sd_bus_message_get_errno(message)))
            } else {
                pending.reply(message)
            }
            return 0
        }, box.toOpaque(), UInt64(callTimeout.components.seconds) * 1_000_000 + UInt64(callTimeout.components.attoseconds / 1_000_000_000_000))
        if r < 0 {
            box.release()
            fail(failure(GeoClueSource.errno(r)))
        }
    }

    static func describe(_ error: sd_bus_error, _ r: Int32) -> String {
        if let message = error.message { return String(cString: message) }
        if let name = error.name { return String(cString: name) }
        return GeoClueSource.errno(r)
    }
}
