#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import GeomonSystem
public import GeomonCore

/// The coarse source `plugin: geoclue`: a GeoClue2 client on the D-Bus system bus, through
/// sd-bus's non-variadic calls, driven from the caller's poll loop (`fileDescriptor`,
/// `pollEvents`, `timeoutMicroseconds`, then `process()`). Nothing here blocks: every D-Bus
/// call is asynchronous, with a timeout.
///
/// The flow: `Manager.GetClient` → set `DesktopId`, `RequestedAccuracyLevel`,
/// `DistanceThreshold`, `TimeThreshold` → subscribe to `LocationUpdated` → `Start`; each
/// update's Location object is read with one `GetAll`. GeoClue going away (`NameOwnerChanged`
/// with no new owner) drops the client; the next owner, or the retry timer, starts again
/// with a new `GetClient` (client paths restart at `Client/1` with a new GeoClue).
///
/// Unknown values become geomon's: speed and heading `-1` → nil; accuracy `0` (GeoClue's
/// NMEA source for HDOP ≤ 1) or `-1` (unknown) → the level's expected accuracy, never a
/// perfect fix.
public final class GeoClueSource {
    /// The levels a profile asks for (`GeoClueSettings.Accuracy`: city, neighborhood, street,
    /// exact), with GeoClue's `RequestedAccuracyLevel` numbers (`value`).
    public typealias Level = GeoClueSettings.Accuracy

    public struct Settings: Sendable, Equatable {
        public var level: Level = .city
        public var desktopID = "geomon"
        public var distanceThresholdMeters: UInt32 = 0
        public var timeThresholdSeconds: UInt32 = 0
        /// How long a D-Bus call may take (GetClient waits for an authorization agent).
        public var callTimeout: Duration = .seconds(10)
        /// Register geomon itself as the GeoClue agent for its user (`agent: true`).
        public var agent = false
        /// A D-Bus address (`unix:path=…`); nil: the system bus (`DBUS_SYSTEM_BUS_ADDRESS`,
        /// else /run/dbus/system_bus_socket).
        public var busAddress: String?
        public init() {}
    }

    public enum Event: Sendable, Equatable {
        case fix(Fix)
        /// The client started (GeoClue sends updates from now on).
        case started(client: String)
        /// Something failed; `first` is false for later failures of the same outage.
        case failed(reason: String, first: Bool, retryIn: Duration)
        /// GeoClue left the bus (exited or crashed).
        case vanished
    }

    public let settings: Settings
    private var bus: OpaquePointer?
    private var slots: [OpaquePointer?] = []
    private var locationSlot: OpaquePointer?
    private var client: String?
    private var pending: [Event] = []
    private var failures = 0
    private var retryAt: UInt64?
    /// The client is wanted (between `start` and `stop`), connected or not.
    private var wanted = false
    /// A request for a client (AddAgent, GetClient) waits for its answer.
    private var requesting = false
    private var inOutage = false
    /// Bumped whenever the client is dropped: replies to an older generation are ignored.
    private var generation = 0

    private static let service = "org.freedesktop.GeoClue2"
    private static let manager = "/org/freedesktop/GeoClue2/Manager"
    private static let properties = "org.freedesktop.DBus.Properties"
    private static let clientInterface = "org.freedesktop.GeoClue2.Client"
    private static let locationInterface = "org.freedesktop.GeoClue2.Location"

    public init(settings: Settings) {
        self.settings = settings
    }

    deinit { stop() }

    public var isRunning: Bool { bus != nil }
    /// The client is wanted (between `start` and `stop`): connected, or connecting again.
    public var isWanted: Bool { wanted }

    /// The client's object path while one is started.
    public var clientPath: String? { client }

    public var fileDescriptor: Int32? { BusPolling.fileDescriptor(bus) }

    public var pollEvents: Int16 { BusPolling.events(bus) }

    /// When `process()` must run without input (CLOCK_MONOTONIC µs): a call's timeout or the retry.
    public var timeoutMicroseconds: UInt64? {
        // Without a connection: the reconnect, while the client is wanted.
        guard bus != nil else { return wanted ? retryAt : nil }
        let earliest = min(BusPolling.timeout(bus) ?? .max, retryAt ?? .max)
        return earliest == .max ? nil : earliest
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else /run/dbus/system_bus_socket)
    /// and asks GeoClue for a client; the answer comes through `process()`.
    public func start() throws(GeoClueError) {
        wanted = true
        do {
            try connect()
        } catch {
            // The caller reports the error it is thrown: not the event as well.
            _ = take()
            throw error
        }
    }

    /// Connects and asks for a client; a failure is counted once (`fail`: its event and the
    /// retry's backoff) and thrown.
    private func connect() throws(GeoClueError) {
        guard bus == nil else { return }
        let (opened, r) = BusPolling.open(settings.busAddress)
        guard let b = opened else {
            // Tried again at the retry's backoff while wanted.
            let message = "cannot connect to the D-Bus system bus: \(Self.errno(r)) (is dbus running? geomon reads DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket)"
            fail(message)
            throw GeoClueError(message)
        }
        bus = b
        var slot: OpaquePointer?
        let rule = "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.service)'"
        // Asynchronous, as every call here: the synchronous form waits for the bus to
        // confirm (authentication, Hello and AddMatch: up to sd-bus's 25 s), holding the loop.
        // A match the bus refuses closes the connection (sd-bus's default), which is retried.
        let m = sd_bus_add_match_async(b, &slot, rule, { message, userdata, _ in
            GeoClueSource.from(userdata).nameOwnerChanged(message)
            return 0
        }, nil, Unmanaged.passUnretained(self).toOpaque())
        if m >= 0 { slots.append(slot) }
        if settings.agent { registerAgent() } else { requestClient() }
    }

    /// Stops the client (Stop, DeleteClient) and closes the connection.
    public func stop() {
        wanted = false
        retryAt = nil
        close()
    }

    /// Stops the client and closes the connection; a wanted client is connected again at the
    /// retry (`process`).
    private func close() {
        guard let bus else { return }
        if let client {
            send(client, Self.clientInterface, "Stop")
            sendDeleteClient(client)
        }
        dropClient()
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        BusPolling.close(bus)
        self.bus = nil
        retryAt = nil
        agentRegistered = false
    }

    /// Reads and dispatches what the bus has; returns the events since the last call.
    public func process(nowMicroseconds now: UInt64 = GeoClueSource.monotonic()) -> [Event] {
        guard let bus else {
            // The connection failed: connect again at the retry while the client is wanted.
            if wanted, let retryAt, now >= retryAt {
                self.retryAt = nil
                // A failure is counted, and its event queued, by `connect` itself.
                try? connect()
            }
            return take()
        }
        while true {
            let r = sd_bus_process(bus, nil)
            if r < 0 {
                let reason = "the D-Bus connection failed: \(Self.errno(r))"
                close()
                fail(reason)
                return take()
            }
            if r == 0 { break }
        }
        if let retryAt, now >= retryAt, client == nil, !requesting {
            self.retryAt = nil
            if settings.agent { registerAgent() } else { requestClient() }
        }
        return take()
    }

    private func take() -> [Event] {
        defer { pending = [] }
        return pending
    }

    // MARK: - The client

    private func requestClient() {
        requesting = true
        let generation = self.generation
        call(Self.manager, "org.freedesktop.GeoClue2.Manager", "GetClient") { [unowned self] reply, error in
            guard generation == self.generation else { return }
            if let error {
                if error.name == "org.freedesktop.DBus.Error.Timeout" || error.name == "org.freedesktop.DBus.Error.NoReply" {
                    fail("GeoClue did not hand out a client within \(Self.seconds(settings.callTimeout)) s: GeoClue 2.6 answers GetClient only once an authorization agent runs for this user (uid \(getuid())); run one (e.g. /usr/libexec/geoclue-2.0/demos/agent) or set 'agent: true' with geomon in GeoClue's [agent] whitelist (docs/sources.md)")
                } else if error.name == "org.freedesktop.DBus.Error.ServiceUnknown" || error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                    fail("GeoClue is not running and could not be started (\(error.message)); install geoclue-2.0")
                } else {
                    fail("GeoClue refused a client: \(error.name): \(error.message)")
                }
                return
            }
            guard let reply, let path = Self.readString(reply, type: "o") else {
                fail("GeoClue's GetClient reply had no client path")
                return
            }
            configure(path, generation: generation)
        }
    }

    private func configure(_ path: String, generation: Int) {
        client = path
        requesting = false
        var steps: [(String, SetValue)] = [
            ("DesktopId", .string(settings.desktopID)),
            ("RequestedAccuracyLevel", .uint32(settings.level.value)),
            ("DistanceThreshold", .uint32(settings.distanceThresholdMeters)),
            ("TimeThreshold", .uint32(settings.timeThresholdSeconds)),
        ]
        func next() {
            guard generation == self.generation else { return }
            guard !steps.isEmpty else {
                subscribeAndStart(path, generation: generation)
                return
            }
            let (name, value) = steps.removeFirst()
            call(path, Self.properties, "Set", fill: { m in
                var r = sd_bus_message_append_basic(m, Self.type(SD_BUS_TYPE_STRING), Self.clientInterface)
                if r >= 0 { r = sd_bus_message_append_basic(m, Self.type(SD_BUS_TYPE_STRING), name) }
                switch value {
                case let .string(text):
                    if r >= 0 { r = sd_bus_message_open_container(m, Self.type(SD_BUS_TYPE_VARIANT), "s") }
                    if r >= 0 { r = sd_bus_message_append_basic(m, Self.type(SD_BUS_TYPE_STRING), text) }
                case let .uint32(number):
                    var number = number
                    if r >= 0 { r = sd_bus_message_open_container(m, Self.type(SD_BUS_TYPE_VARIANT), "u") }
                    if r >= 0 { r = sd_bus_message_append_basic(m, Self.type(SD_BUS_TYPE_UINT32), &number) }
                }
                if r >= 0 { r = sd_bus_message_close_container(m) }
                return r
            }) { [unowned self] _, error in
                if let error {
                    fail("GeoClue refused \(name): \(error.name): \(error.message)")
                    return
                }
                next()
            }
        }
        next()
    }

    private func subscribeAndStart(_ path: String, generation: Int) {
        guard let bus else { return }
        var slot: OpaquePointer?
        // Installed before Start is handled: the bus takes the connection's messages in order.
        let r = sd_bus_match_signal_async(bus, &slot, Self.service, path, Self.clientInterface, "LocationUpdated", { message, userdata, _ in
            GeoClueSource.from(userdata).locationUpdated(message)
            return 0
        }, nil, Unmanaged.passUnretained(self).toOpaque())
        guard r >= 0 else {
            fail("cannot subscribe to GeoClue's LocationUpdated: \(Self.errno(r))")
            return
        }
        if let locationSlot { sd_bus_slot_unref(locationSlot) }
        locationSlot = slot
        call(path, Self.clientInterface, "Start") { [unowned self] _, error in
            guard generation == self.generation else { return }
            if let error {
                fail("GeoClue refused to start the client: \(error.name): \(error.message)"
                     + (error.name.hasSuffix("AccessDenied") ? " (see [\(settings.desktopID)] in /etc/geoclue/geoclue.conf, docs/sources.md)" : ""))
                return
            }
            failures = 0
            inOutage = false
            pending.append(.started(client: path))
        }
    }

    private func locationUpdated(_ message: OpaquePointer?) {
        _ = Self.readString(message, type: "o")
        guard let path = Self.readString(message, type: "o"), path != "/" else { return }
        let generation = self.generation
        call(path, Self.properties, "GetAll", fill: { m in
            sd_bus_message_append_basic(m, Self.type(SD_BUS_TYPE_STRING), Self.locationInterface)
        }) { [unowned self] reply, error in
            guard generation == self.generation, error == nil, let reply else { return }
            if let fix = Self.fix(fromGetAll: reply, level: settings.level) { pending.append(.fix(fix)) }
        }
    }

    private func nameOwnerChanged(_ message: OpaquePointer?) {
        _ = Self.readString(message, type: "s")
        _ = Self.readString(message, type: "s")
        let newOwner = Self.readString(message, type: "s") ?? ""
        if newOwner.isEmpty {
            guard client != nil else { return }
            dropClient()
            pending.append(.vanished)
            // In production the next call starts GeoClue again (bus activation).
            retryAt = Self.monotonic() + 1_000_000
        } else if client == nil, !requesting {
            // GeoClue (re)appeared: ask it now, unless our own call, which started it by bus
            // activation, is still waiting for its answer.
            retryAt = nil
            if settings.agent { registerAgent() } else { requestClient() }
        }
    }

    private func dropClient() {
        generation += 1
        client = nil
        requesting = false
        if let locationSlot { sd_bus_slot_unref(locationSlot) }
        locationSlot = nil
    }

    private func fail(_ reason: String) {
        dropClient()
        failures += 1
        var delay = Duration.seconds(5)
        for _ in 1..<min(failures, 10) where delay < .seconds(300) { delay = delay * 2 }
        delay = min(delay, .seconds(300))
        if bus != nil || wanted { retryAt = Self.monotonic() + UInt64(delay.components.seconds) * 1_000_000 }
        pending.append(.failed(reason: reason, first: !inOutage, retryIn: delay))
        inOutage = true
    }

    // MARK: - The built-in agent (`agent: true`)

    private var agentRegistered = false

    /// Exports /org/freedesktop/GeoClue2/Agent (answering GetAll/Get of MaxAccuracyLevel and
    /// AuthorizeApp) and calls AddAgent asynchronously: GeoClue reads the agent's properties
    /// before it answers.
    private func registerAgent() {
        guard let bus else { return }
        requesting = true
        if !agentRegistered {
            var slot: OpaquePointer?
            let r = sd_bus_add_object(bus, &slot, "/org/freedesktop/GeoClue2/Agent", { message, userdata, _ in
                GeoClueSource.from(userdata).answerAgent(message)
            }, Unmanaged.passUnretained(self).toOpaque())
            guard r >= 0 else {
                fail("cannot export the GeoClue agent: \(Self.errno(r))")
                return
            }
            slots.append(slot)
            agentRegistered = true
        }
        let generation = self.generation
        call(Self.manager, "org.freedesktop.GeoClue2.Manager", "AddAgent", fill: { m in
            sd_bus_message_append_basic(m, Self.type(SD_BUS_TYPE_STRING), "geomon")
        }) { [unowned self] _, error in
            guard generation == self.generation else { return }
            if let error {
                fail("GeoClue refused geomon as its agent: \(error.message) (add geomon to 'whitelist' in the [agent] section of /etc/geoclue/geoclue.conf, docs/sources.md)")
                return
            }
            requestClient()
        }
    }

    private func answerAgent(_ message: OpaquePointer?) -> Int32 {
        guard let bus else { return 0 }
        var reply: OpaquePointer?
        var level = settings.level.value
        var r: Int32
        if sd_bus_message_is_method_call(message, Self.properties, "GetAll") > 0 {
            r = sd_bus_message_new_method_return(message, &reply)
            if r >= 0 { r = sd_bus_message_open_container(reply, Self.type(SD_BUS_TYPE_ARRAY), "{sv}") }
            if r >= 0 { r = sd_bus_message_open_container(reply, Self.type(SD_BUS_TYPE_DICT_ENTRY), "sv") }
            if r >= 0 { r = sd_bus_message_append_basic(reply, Self.type(SD_BUS_TYPE_STRING), "MaxAccuracyLevel") }
            if r >= 0 { r = sd_bus_message_open_container(reply, Self.type(SD_BUS_TYPE_VARIANT), "u") }
            if r >= 0 { r = sd_bus_message_append_basic(reply, Self.type(SD_BUS_TYPE_UINT32), &level) }
            if r >= 0 { r = sd_bus_message_close_container(reply) }
            if r >= 0 { r = sd_bus_message_close_container(reply) }
            if r >= 0 { r = sd_bus_message_close_container(reply) }
        } else if sd_bus_message_is_method_call(message, Self.properties, "Get") > 0 {
            r = sd_bus_message_new_method_return(message, &reply)
            if r >= 0 { r = sd_bus_message_open_container(reply, Self.type(SD_BUS_TYPE_VARIANT), "u") }
            if r >= 0 { r = sd_bus_message_append_basic(reply, Self.type(SD_BUS_TYPE_UINT32), &level) }
            if r >= 0 { r = sd_bus_message_close_container(reply) }
        } else if sd_bus_message_is_method_call(message, "org.freedesktop.GeoClue2.Agent", "AuthorizeApp") > 0 {
            var yes: Int32 = 1
            r = sd_bus_message_new_method_return(message, &reply)
            if r >= 0 { r = sd_bus_message_append_basic(reply, Self.type(SD_BUS_TYPE_BOOLEAN), &yes) }
            if r >= 0 { r = sd_bus_message_append_basic(reply, Self.type(SD_BUS_TYPE_UINT32), &level) }
        } else {
            return 0
        }
        if r >= 0 { r = sd_bus_send(bus, reply, nil) }
        sd_bus_message_unref(reply)
        return 1
    }

    // MARK: - Calls

    private enum SetValue {
        case string(String)
        case uint32(UInt32)
    }

    struct CallError {
        var name: String
        var message: String
    }

    /// The Swift side of one asynchronous call: its completion, retained until the reply.
    private final class Pending {
        let completion: (OpaquePointer?, CallError?) -> Void
        init(_ completion: @escaping (OpaquePointer?, CallError?) -> Void) { self.completion = completion }
    }

    /// Sends a method call to GeoClue; `completion` gets the reply or the error (a timeout
    /// after `settings.callTimeout` included).
    private func call(_ path: String, _ interface: String, _ member: String, fill: (OpaquePointer?) -> Int32 = { _ in 0 },
                      completion: @escaping (OpaquePointer?, CallError?) -> Void) {
        guard let bus else { return }
        var m: OpaquePointer?
        var r = sd_bus_message_new_method_call(bus, &m, Self.service, path, interface, member)
        if r >= 0 { r = fill(m) }
        let box = Unmanaged.passRetained(Pending(completion))
        if r >= 0 {
            let usec = UInt64(settings.callTimeout.components.seconds) * 1_000_000 + UInt64(settings.callTimeout.components.attoseconds / 1_000_000_000_000)
            r = sd_bus_call_async(bus, nil, m, { reply, userdata, _ in
                let pending = Unmanaged<Pending>.fromOpaque(userdata!).takeRetainedValue()
                if let error = sd_bus_message_get_error(reply) {
                    pending.completion(nil, CallError(name: error.pointee.name.map { String(cString: $0) } ?? "error",
                                                      message: error.pointee.message.map { String(cString: $0) } ?? ""))
                } else {
                    pending.completion(reply, nil)
                }
                return 0
            }, box.toOpaque(), usec)
        }
        sd_bus_message_unref(m)
        if r < 0 {
            box.release()
            completion(nil, CallError(name: "geomon.CallFailed", message: Self.errno(r)))
        }
    }

    /// A call whose answer does not matter (Stop and DeleteClient on the way out).
    private func send(_ path: String, _ interface: String, _ member: String, fill: (OpaquePointer?) -> Int32 = { _ in 0 }) {
        guard let bus else { return }
        var m: OpaquePointer?
        var r = sd_bus_message_new_method_call(bus, &m, Self.service, path, interface, member)
        if r >= 0 { r = fill(m) }
        if r >= 0 { _ = sd_bus_message_set_expect_reply(m, 0); _ = sd_bus_send(bus, m, nil) }
        sd_bus_message_unref(m)
    }

    private func sendDeleteClient(_ path: String) {
        send(Self.manager, "org.freedesktop.GeoClue2.Manager", "DeleteClient") { m in
            sd_bus_message_append_basic(m, Self.type(SD_BUS_TYPE_OBJECT_PATH), path)
        }
    }

    // MARK: - Reading messages

    static func type(_ code: Int) -> CChar { CChar(truncatingIfNeeded: code) }

    static func readString(_ message: OpaquePointer?, type: Character) -> String? {
        var pointer: UnsafePointer<CChar>?
        let code: Int = type == "o" ? Int(SD_BUS_TYPE_OBJECT_PATH) : Int(SD_BUS_TYPE_STRING)
        guard sd_bus_message_read_basic(message, Self.type(code), &pointer) > 0, let pointer else { return nil }
        return String(cString: pointer)
    }

    /// A fix from a Location's `GetAll` reply (`a{sv}`), or nil when it has no position.
    static func fix(fromGetAll reply: OpaquePointer, level: Level) -> Fix? {
        var values: [String: Double] = [:]
        var seconds: UInt64?
        var micros: UInt64 = 0
        guard sd_bus_message_enter_container(reply, type(Int(SD_BUS_TYPE_ARRAY)), "{sv}") > 0 else { return nil }
        while sd_bus_message_enter_container(reply, type(Int(SD_BUS_TYPE_DICT_ENTRY)), "sv") > 0 {
            guard let key = readString(reply, type: "s") else { break }
            var kind: CChar = 0
            var contents: UnsafePointer<CChar>?
            _ = sd_bus_message_peek_type(reply, &kind, &contents)
            let inner = contents.map { String(cString: $0) } ?? ""
            if inner == "d", sd_bus_message_enter_container(reply, type(Int(SD_BUS_TYPE_VARIANT)), "d") > 0 {
                var value = 0.0
                _ = sd_bus_message_read_basic(reply, type(Int(SD_BUS_TYPE_DOUBLE)), &value)
                values[key] = value
                _ = sd_bus_message_exit_container(reply)
            } else if key == "Timestamp", inner == "(tt)", sd_bus_message_enter_container(reply, type(Int(SD_BUS_TYPE_VARIANT)), "(tt)") > 0 {
                if sd_bus_message_enter_container(reply, type(Int(SD_BUS_TYPE_STRUCT)), "tt") > 0 {
                    var s: UInt64 = 0
                    _ = sd_bus_message_read_basic(reply, type(Int(SD_BUS_TYPE_UINT64)), &s)
                    _ = sd_bus_message_read_basic(reply, type(Int(SD_BUS_TYPE_UINT64)), &micros)
                    seconds = s
                    _ = sd_bus_message_exit_container(reply)
                }
                _ = sd_bus_message_exit_container(reply)
            } else {
                _ = sd_bus_message_skip(reply, "v")
            }
            _ = sd_bus_message_exit_container(reply)
        }
        _ = sd_bus_message_exit_container(reply)
        return fix(latitude: values["Latitude"], longitude: values["Longitude"], accuracy: values["Accuracy"],
                   speed: values["Speed"], heading: values["Heading"], seconds: seconds, micros: micros, level: level)
    }

    /// GeoClue's values with its unknown sentinels mapped to geomon's conventions.
    public static func fix(latitude: Double?, longitude: Double?, accuracy: Double?, speed: Double?, heading: Double?,
                           seconds: UInt64?, micros: UInt64, level: Level) -> Fix? {
        guard let latitude, let longitude, latitude.isFinite, longitude.isFinite,
              (-90...90).contains(latitude), (-180...180).contains(longitude), let seconds, seconds < 1 << 40 else { return nil }
        let accuracyMeters = accuracy.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? level.expectedAccuracyMeters
        let time = UTCTime(millisecondsSince1970: Int64(seconds) * 1000 + Int64(micros / 1000))
        return Fix(time: time, coordinate: Coordinate(latitude: latitude, longitude: longitude),
                   horizontalAccuracyMeters: accuracyMeters,
                   speedMetersPerSecond: speed.flatMap(ReportedMotion.speed),
                   courseDegrees: heading.flatMap(ReportedMotion.course),
                   source: .coarse)
    }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> GeoClueSource {
        Unmanaged<GeoClueSource>.fromOpaque(userdata!).takeUnretainedValue()
    }

    static func errno(_ r: Int32) -> String { String(cString: strerror(-r)) }

    static func seconds(_ d: Duration) -> Int64 { d.components.seconds }

    public static func monotonic() -> UInt64 {
        UInt64(Monotonic.microseconds())
    }
}

public struct GeoClueError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension GeoClueSettings.Accuracy {
    /// GeoClue's `RequestedAccuracyLevel` (`GClueAccuracyLevel`).
    public var value: UInt32 {
        switch self {
        case .city: 4
        case .neighborhood: 5
        case .street: 6
        case .exact: 8
        }
    }
}

/// An sd-bus connection served by the caller's poll loop: its socket, the events to poll for,
/// and when to process it without input (a call's timeout, CLOCK_MONOTONIC µs).
enum BusPolling {
    /// Opens a connection to the bus at `address` (nil: the system bus), as a client; the
    /// connection and sd-bus's result (negative: an errno).
    static func open(_ address: String?) -> (OpaquePointer?, Int32) {
        var b: OpaquePointer?
        var r: Int32
        if let address {
            r = sd_bus_new(&b)
            if r >= 0 { r = sd_bus_set_address(b, address) }
            if r >= 0 { r = sd_bus_set_bus_client(b, 1) }
            if r >= 0 { r = sd_bus_start(b) }
            if r < 0 {
                sd_bus_unref(b)
                b = nil
            }
        } else {
            r = sd_bus_open_system_with_description(&b, "geomon")
        }
        return (r >= 0 ? b : nil, r)
    }

    /// Writes out what is queued (a client's Stop, a modem's switch) when the connection is
    /// up, and closes it. `sd_bus_flush` first waits for a connection still in its handshake,
    /// for as long as sd-bus allows one (90 s): a bus that accepted the socket and never
    /// answered would hold the daemon's loop, and a stop past systemd's timeout.
    static func close(_ bus: OpaquePointer) {
        if sd_bus_is_ready(bus) > 0 { _ = sd_bus_flush(bus) }
        sd_bus_close_unref(bus)
    }

    static func fileDescriptor(_ bus: OpaquePointer?) -> Int32? {
        guard let bus else { return nil }
        let fd = sd_bus_get_fd(bus)
        return fd >= 0 ? fd : nil
    }

    static func events(_ bus: OpaquePointer?) -> Int16 {
        guard let bus else { return 0 }
        return Int16(truncatingIfNeeded: sd_bus_get_events(bus))
    }

    static func timeout(_ bus: OpaquePointer?) -> UInt64? {
        guard let bus else { return nil }
        var timeout: UInt64 = .max
        _ = sd_bus_get_timeout(bus, &timeout)
        return timeout == .max ? nil : timeout
    }

    /// Waits on the connection for at most until `deadline` (CLOCK_MONOTONIC µs) or its own
    /// timeout, whichever is first (a caller without a loop of its own: a command, shutdown).
    static func wait(_ bus: OpaquePointer?, until deadline: UInt64) {
        var entry = pollfd(fd: fileDescriptor(bus) ?? -1, events: events(bus), revents: 0)
        let until = min(deadline, timeout(bus) ?? deadline)
        let now = GeoClueSource.monotonic()
        _ = poll(&entry, 1, until <= now ? 0 : Int32(clamping: (until - now + 999) / 1000))
    }
}
