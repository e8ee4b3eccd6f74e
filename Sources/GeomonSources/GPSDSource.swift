import CGPS
import CGeomonShims
public import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// Why talking to gpsd failed.
public struct GPSDError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// gpsd is not running, refused, or the host/port is wrong.
        case connectFailed
        /// The watch command could not be sent.
        case watchFailed
        /// An operation needs a connection and there is none.
        case notConnected
    }

    public var code: Code
    /// `host:port` of the gpsd.
    public var endpoint: String
    public var message: String

    public var description: String { "gpsd at \(endpoint): \(message)" }
}

/// A position source reading a gpsd through libgps. It owns the `gps_data_t` and hides it.
///
/// The daemon drives it: `connect()` (and on failure asks `backoff` when to try again),
/// `watch(enabled:device:)` when the policy wants the receiver on or off, sleeps in the kernel on
/// `fileDescriptor` (poll/epoll), and calls `readAvailable()` when it is readable. Reading never
/// blocks. A closed connection turns into `.disconnected(reason:)`; nothing here sleeps or retries
/// by itself. The wanted watch is remembered and re-sent after a reconnect.
public final class GPSDSource {
    /// What happened while reading.
    public enum Event: Sendable, Equatable {
        /// A position fix (mode ≥ 2 with a valid position and a time).
        case fix(Fix)
        /// The connection state changed.
        case stateChanged(State)
        /// gpsd answered a command with an error (its message): a `?DEVICE` write to a device
        /// whose type it does not know is refused, for one.
        case refused(String)
    }

    /// The connection state; changes are reported once each, as events.
    public enum State: Sendable, Equatable {
        case disconnected(reason: String)
        case connected
    }

    public let host: String
    public let port: String
    public private(set) var state: State = .disconnected(reason: "not connected yet")
    /// Reconnect timing; call `backoff.nextAttempt(after:)` after a failed `connect()` or a
    /// lost connection. It resets when a connection delivers more than gpsd's greeting.
    public var backoff = ReconnectBackoff()
    /// Whether the watch is wanted (re-sent after every reconnect), and for which device.
    public private(set) var watchEnabled = false
    public private(set) var watchDevice: String?

    private let data: UnsafeMutablePointer<gps_data_t>
    private var open = false
    /// Messages read on the current connection (the first is gpsd's VERSION banner).
    private var messagesSinceConnect = 0
    /// The epoch logic: when a report's accuracy is known (`GPSDEpochs`).
    private var epochs = GPSDEpochs()

    /// How long the daemon waits for an epoch's accuracy before taking the fix without it.
    public static let epochBudget: Duration = .seconds(1)

    /// At most this many messages are handled per `readAvailable()` call, so a flood from
    /// gpsd cannot starve the rest of the loop.
    public static let maxMessagesPerRead = 256

    public init(host: String = "127.0.0.1", port: String = "2947") {
        self.host = host
        self.port = port
        guard let data = geomon_gps_new() else { preconditionFailure("out of memory allocating gps_data_t") }
        self.data = data
    }

    deinit {
        if open { _ = geomon_gps_close(data) }
        geomon_gps_free(data)
    }

    /// `HOST:PORT`, an IPv6 address in brackets (`[::1]:2947`).
    public var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The socket to wait on while connected; nil when disconnected.
    public var fileDescriptor: Int32? {
        open ? Int32(geomon_gps_fd(data)) : nil
    }

    /// How long `connect()` waits for gpsd's host to accept the connection.
    public static let connectTimeoutMilliseconds: Int32 = 3000

    /// Connects (no-op when connected). On success the state becomes `.connected` and the
    /// watch's state (on or off) is sent; the backoff resets only when the connection delivers
    /// more than gpsd's greeting (`readAvailable()`), so a server that accepts and closes at
    /// once, with or without its VERSION banner, is retried ever more slowly. A host that does
    /// not answer within `connectTimeoutMilliseconds` fails then. On failure the state is
    /// `.disconnected` with the reason, and the error is thrown.
    @discardableResult
    public func connect() throws(GPSDError) -> [Event] {
        guard !open else { return [] }
        // libgps connects blocking: to a host whose packets are dropped it would hold the
        // daemon's loop (signals, hooks, MQTT) for the two minutes of the kernel's SYN retries.
        guard geomon_tcp_answers(host, port, Self.connectTimeoutMilliseconds) == 0 else {
            let message = "no answer from gpsd within \(Self.connectTimeoutMilliseconds / 1000) s"
            _ = setState(.disconnected(reason: message))
            throw GPSDError(code: .connectFailed, endpoint: endpoint, message: message)
        }
        errno = 0
        let rc = geomon_gps_open(data, host, port)
        guard rc == 0 else {
            let code = errno != 0 ? errno : rc
            let message = String(cString: geomon_gps_errstr(code))
            _ = setState(.disconnected(reason: message))
            throw GPSDError(code: .connectFailed, endpoint: endpoint, message: message)
        }
        open = true
        messagesSinceConnect = 0
        epochs.reset()
        var events = setState(.connected)
        // The watch's state, on or off: gpsd answers either, so a connection that serves says
        // more than its greeting even while the receiver is off.
        do throws(GPSDError) {
            try sendWatch()
        } catch {
            events += disconnect(reason: error.message)
            throw error
        }
        return events
    }

    /// Enables or disables the watch. Enabled: gpsd streams JSON reports (only from `device`
    /// if given). Disabled: gpsd may power the receiver down when no one else watches. The wish
    /// is remembered while disconnected and applied on the next `connect()`.
    public func watch(enabled: Bool, device: String? = nil) throws(GPSDError) {
        watchEnabled = enabled
        watchDevice = device
        guard open else { return }
        try sendWatch()
    }

    public func keepAlive() throws(GPSDError) {
        guard open else { throw GPSDError(code: .watchFailed, endpoint: endpoint, message: "not connected") }
        try sendWatch()
    }

    private func sendWatch() throws(GPSDError) {
        let rc: Int32
        if let device = watchDevice {
            rc = device.withCString { geomon_gps_watch(data, watchEnabled, $0) }
        } else {
            rc = geomon_gps_watch(data, watchEnabled, nil)
        }
        guard rc == 0 else {
            throw GPSDError(code: .watchFailed, endpoint: endpoint, message: "cannot send WATCH: \(String(cString: strerror(errno)))")
        }
    }

    /// Handles everything gpsd has sent, without blocking. Returns fixes (one per fix time; gpsd
    /// may report an epoch several times) and state changes. A closed or failed connection
    /// gives `.stateChanged(.disconnected)`; call `connect()` again later.
    public func readAvailable() -> [Event] {
        guard open else { return [] }
        var events: [Event] = []
        var handled = 0
        while handled < Self.maxMessagesPerRead, geomon_gps_waiting(data, 0) {
            errno = 0
            let rc = geomon_gps_read(data)
            if rc < 0 {
                let reason = errno != 0 ? "connection lost: \(String(cString: strerror(errno)))" : "connection closed by gpsd"
                events += disconnect(reason: reason)
                return events
            }
            if rc == 0 { break }
            // gpsd is serving, not just greeting (its VERSION banner comes on every accept, from
            // a gpsd that closes at once too): the next failure backs off from the start.
            messagesSinceConnect += 1
            if messagesSinceConnect > 1 { backoff.succeeded() }
            handled += 1
            if let message = geomon_gps_take_error(data) {
                events.append(.refused(String(cString: message)))
                continue
            }
            guard let (fix, accuracyKnown) = currentFix() else { continue }
            events += epochs.reported(fix, accuracyKnown: accuracyKnown, device: reportingDevice).map { .fix($0) }
        }
        return events
    }

    /// The device gpsd's last report came from (its TPV `device`), if it named one.
    public var reportingDevice: String? {
        let path = String(cString: geomon_gps_device_path(data))
        return path.isEmpty ? nil : path
    }

    /// The one device gpsd's last DEVICES message listed (its answer to the watch), if it listed
    /// exactly one: the receiver to switch before it has reported (a receiver left off sends
    /// nothing, so no report ever names it).
    public var listedDevice: String? {
        guard open, geomon_gps_listed_device_count(data) == 1 else { return nil }
        let path = String(cString: geomon_gps_listed_device_path(data, 0))
        return path.isEmpty ? nil : path
    }

    /// Writes `bytes` to the receiver at `device` through gpsd (`?DEVICE={"path":…,"hexdata":…}`:
    /// gpsd must not run read-only, `-b`). gpsd answers with the device's settings, not with
    /// whether the receiver obeyed: the receiver's own reports say that.
    public func sendToDevice(_ bytes: [UInt8], device: String) throws(GPSDError) {
        guard open else { throw GPSDError(code: .watchFailed, endpoint: endpoint, message: "not connected") }
        let hex = bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
        }.joined()
        var path = "\""
        for scalar in device.unicodeScalars {
            switch scalar {
            case "\"": path += "\\\""
            case "\\": path += "\\\\"
            case _ where scalar.value < 0x20: path += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: path.unicodeScalars.append(scalar)
            }
        }
        path += "\""
        let rc = "?DEVICE={\"path\":\(path),\"hexdata\":\"\(hex)\"}\n".withCString { geomon_gps_send(data, $0) }
        guard rc == 0 else {
            throw GPSDError(code: .watchFailed, endpoint: endpoint, message: "cannot send DEVICE: \(String(cString: strerror(errno)))")
        }
    }

    /// True while an epoch waits for the rest of its reports (its accuracy, the receiver's
    /// velocity: `GPSDEpochs`).
    public var hasPendingFix: Bool { epochs.pending != nil }

    /// The time of the epoch held, if any: the daemon's budget runs from when each is first held.
    public var pendingFixTime: UTCTime? { epochs.pending?.time }

    /// Gives up waiting for the rest of the held epoch: returns it as merged so far (the
    /// unknown-accuracy default where gpsd gave none).
    public func flushPendingFix() -> [Event] {
        epochs.flush().map { .fix($0) }
    }

    /// Closes the connection (state `.disconnected(reason:)`).
    @discardableResult
    public func disconnect(reason: String = "closed") -> [Event] {
        let events = flushPendingFix()
        if open {
            _ = geomon_gps_close(data)
            open = false
        }
        return events + setState(.disconnected(reason: reason))
    }

    private func setState(_ new: State) -> [Event] {
        guard new != state else { return [] }
        state = new
        return [.stateChanged(new)]
    }

    /// The fix in the last message, if it was a new one, and whether it carries an accuracy.
    /// Accuracy: `eph`, else max(`epx`, `epy`), else `AccuracyModel.unknownAccuracyMeters`.
    private func currentFix() -> (Fix, Bool)? {
        guard geomon_gps_has_mode(data), geomon_gps_has_time(data), geomon_gps_has_latlon(data),
              geomon_gps_mode(data) >= 2 else { return nil }
        let timeMs = Int64(geomon_gps_time_ms(data))
        guard timeMs > 0 else { return nil }
        let coordinate = Coordinate(latitude: geomon_gps_latitude(data), longitude: geomon_gps_longitude(data))
        guard coordinate.isValid else { return nil }
        let reported = GPSDEpochs.accuracy(eph: geomon_gps_eph(data), epx: geomon_gps_epx(data), epy: geomon_gps_epy(data))
        let accuracy = reported ?? AccuracyModel.unknownAccuracyMeters
        let known = reported != nil
        let speed = geomon_gps_speed(data), track = geomon_gps_track(data)
        let fix = Fix(
            time: UTCTime(millisecondsSince1970: timeMs),
            coordinate: coordinate,
            horizontalAccuracyMeters: accuracy,
            speedMetersPerSecond: ReportedMotion.speed(speed),
            courseDegrees: ReportedMotion.course(track),
            source: .gnss
        )
        return (fix, known)
    }
}
