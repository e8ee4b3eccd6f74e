#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
public import GeomonCore
import GeomonFormat
import GeomonSystem

/// The durable MQTT publisher: messages come from the outbox (the store), oldest first, and are
/// marked published only on the broker's acknowledgement (PUBACK at QoS 1).
///
/// Driven from the caller's poll loop, no thread of its own: `fileDescriptor` and `pollEvents`
/// say what to wait for, `step` does the work (libmosquitto's `loop_read`, `loop_write`,
/// `loop_misc`, reconnects, the window) and returns when it wants to run next.
///
/// One libmosquitto handle per connection: when a connection dies the handle is destroyed with
/// whatever the library still queued, and the next connection starts again from the oldest
/// message not acknowledged. So the store is the only queue; a message is sent twice only if
/// it was sent and not acknowledged (QoS 1's at-least-once), and then with the same bytes.
public final class MQTTPublisher {
    public struct Settings: Sendable {
        public var host: String
        public var port: Int
        public var clientID: String
        public var username: String?
        public var password: String?
        public var tls: MQTTSettings.TLS?
        public var qos: Int
        public var keepaliveSeconds: Int
        /// Messages sent and not yet acknowledged, at most.
        public var window = 16
        /// Retained online/offline status and the will (`{"_type":"lwt"}`); nil: neither
        /// (`status: false`).
        public var statusTopic: String?
        public var trackerID: String
        /// Reconnect backoff: doubling from `minBackoff` to `maxBackoff`.
        public var minBackoff: Duration = .seconds(1)
        public var maxBackoff: Duration = .seconds(60)
        /// The one topic commands are read from (`publish.mqtt.commands`), subscribed at QoS 1
        /// on every connection; nil: nothing is subscribed. With it the session is persistent
        /// (clean session off), so the broker keeps the commands sent while geomon was away.
        public var commandTopic: String?
        /// MQTT 5 (the default: the broker says why it refuses a message) or 3.1.1.
        public var protocolVersion: MQTTSettings.ProtocolVersion

        public init(settings: MQTTSettings, profile: String, statusTopic: String) {
            host = settings.host
            port = settings.effectivePort
            clientID = settings.effectiveClientID(profile: profile)
            username = settings.username
            password = settings.password
            tls = settings.tls
            qos = settings.qos
            keepaliveSeconds = max(5, Int(settings.keepalive.components.seconds))
            self.statusTopic = settings.status ? statusTopic : nil
            trackerID = settings.effectiveTrackerID(profile: profile)
            commandTopic = settings.commands ? settings.commandTopic : nil
            protocolVersion = settings.protocolVersion
        }
    }

    /// A message received on the command topic.
    public struct Received: Sendable {
        public var topic: String
        /// The payload, at most `maxCopied` bytes of it.
        public var payload: [UInt8]
        /// The payload's whole size.
        public var size: Int
        /// The broker's retained copy (sent on subscribing), not a command sent now.
        public var retained: Bool

        /// More than any command may be: a larger payload is kept only this far (its size says it).
        public static let maxCopied = 256 * 1024
    }

    public typealias State = MQTTSession.State
    public typealias Report = MQTTSession.Report

    public typealias Now = (wall: UTCTime, monotonicMicroseconds: Int64)

    public let settings: Settings
    private let outbox: any PublicationOutbox
    public var onReport: ((Report) -> Void)?

    /// The protocol's decisions (connect, window, acknowledgements, backoff).
    private var session: MQTTSession
    public var state: State { session.state }
    /// Why the last connection attempt failed or the connection was lost.
    public var lastError: String? { session.lastError }
    /// Messages acknowledged since start.
    public private(set) var publishedCount = 0
    /// Messages the broker refused since start (MQTT 5).
    public private(set) var refusedCount = 0

    private var handle: OpaquePointer?
    /// What libmosquitto's callbacks said since the last step.
    private var connectedFlag = false
    private var sessionPresent = false
    private var refusedReason: String?
    private var lostReason: String?
    private var lastLibraryError: String?
    private var lastMisc: Int64 = 0
    /// Messages on the command topic since the last `takeReceived`.
    private var received: [Received] = []
    /// Whether the command topic's subscription was acknowledged on this connection.
    public private(set) var subscribed = false
    /// Why the broker refused the command subscription on this connection (its SUBACK code).
    public private(set) var subscriptionRefused: String?

    /// The messages received on the command topic since the last call, in order.
    public func takeReceived() -> [Received] {
        defer { received.removeAll() }
        return received
    }

    private static let libraryReady: Bool = { mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue }()

    public init(settings: Settings, outbox: any PublicationOutbox) {
        self.settings = settings
        self.outbox = outbox
        session = MQTTSession(settings: .init(window: settings.window, keepaliveSeconds: settings.keepaliveSeconds, qos: settings.qos,
                                              minBackoff: settings.minBackoff, maxBackoff: settings.maxBackoff,
                                              refusesByDropping: settings.protocolVersion == .v311))
        _ = Self.libraryReady
    }

    deinit {
        if let handle { mosquitto_destroy(handle) }
    }

    /// The socket to poll, while there is one.
    public var fileDescriptor: Int32? {
        guard let handle else { return nil }
        let fd = mosquitto_socket(handle)
        return fd >= 0 ? fd : nil
    }

    /// POLLIN, and POLLOUT while the library has bytes to write.
    public var pollEvents: Int16 {
        guard let handle else { return 0 }
        return Int16(POLLIN) | (mosquitto_want_write(handle) ? Int16(POLLOUT) : 0)
    }

    /// Messages in the outbox not yet acknowledged.
    public var pendingCount: Int { (try? outbox.pendingPublicationCount()) ?? 0 }

    /// True when nothing is pending and nothing is in flight (after a `step`).
    public var isDrained: Bool { session.isDrained }

    /// New messages were committed: send them (on the next `step`).
    public func poke() {
        session.poke()
    }

    /// Skips the backoff: the next `step` connects (`geomon publish retry`, SIGUSR1).
    public func reconnectNow() {
        session.reconnectNow()
    }

    /// Does what is due: reads and writes the socket (`revents` from poll, 0 when woken by a
    /// timer), keeps the connection alive, reconnects, sends what the window allows. Returns
    /// the monotonic instant to call again without input.
    @discardableResult
    public func step(revents: Int16 = 0, now: Now) -> Int64 {
        let mono = now.monotonicMicroseconds
        if let handle {
            var rc: Int32 = MOSQ_ERR_SUCCESS.rawValue
            // Any readiness (POLLOUT included: a TLS handshake progresses only in loop_read).
            if revents != 0 { rc = mosquitto_loop_read(handle, 8) }
            if rc == MOSQ_ERR_SUCCESS.rawValue, revents & Int16(POLLOUT) != 0 { rc = mosquitto_loop_write(handle, 8) }
            if rc == MOSQ_ERR_SUCCESS.rawValue, mono - lastMisc >= 1_000_000 || revents == 0 {
                lastMisc = mono
                rc = mosquitto_loop_misc(handle)
            }
            if rc != MOSQ_ERR_SUCCESS.rawValue, lostReason == nil, refusedReason == nil {
                lostReason = describe(rc)
            }
            if connectedFlag, session.state != .connected {
                // Not inside `onReport?(…)`: a nil handler would skip the session's transition.
                let report = session.accepted(now: mono, pending: pendingCount, sessionPresent: sessionPresent)
                onReport?(report)
                if let topic = settings.statusTopic {
                    var mid: Int32 = 0
                    if publishRaw(handle, topic: topic, payload: OwnTracks.online(at: now.wall, trackerID: settings.trackerID), retain: true, mid: &mid)
                        == MOSQ_ERR_SUCCESS.rawValue
                    {
                        statusMid = mid
                        session.awaitingSetup()
                    }
                }
            }
            markAcknowledged(at: now.wall)
            session.serving(now: mono)
            if let reason = refusedReason ?? lostReason ?? (mosquitto_socket(handle) < 0 ? "connection closed" : nil) {
                failed(reason, now: now)
            } else if session.state == .connected {
                fill(now: now)
            } else if session.connectTimedOut(now: mono) {
                failed("no answer from the broker within \(settings.keepaliveSeconds) s", now: now)
            }
        }
        if handle == nil, session.wantsConnect(now: mono) {
            connect(now: now)
        }
        return session.nextWake(now: mono)
    }

    private func markAcknowledged(at time: UTCTime) {
        let acknowledged = session.takeAcknowledged()
        for seq in acknowledged { topics[seq] = nil }
        if !acknowledged.isEmpty {
            do {
                try outbox.markPublished(acknowledged, at: time)
                publishedCount += acknowledged.count
            } catch {
                session.putBack(acknowledged)
                onReport?(.storeFailed("\(error)"))
            }
        }
        let refused = session.takeRefused()
        guard let first = refused.first else { return }
        do {
            try outbox.markRefused(refused, at: time)
            refusedCount += refused.count
            onReport?(.refused(count: refused.count, reason: first.reason, topic: topics[first.seq] ?? "?"))
        } catch {
            session.putBackRefused(refused)
            onReport?(.storeFailed("\(error)"))
        }
        for row in refused { topics[row.seq] = nil }
    }

    /// The topic of each message in flight (for the refusal's report).
    private var topics: [Int64: String] = [:]

    /// A clean stop: the offline status (retained), then DISCONNECT, waiting at most `timeout`.
    /// The status goes at QoS 0: no acknowledgement is awaited before the DISCONNECT anyway, and
    /// at QoS 1 libmosquitto would hold it back behind a full window of messages in flight, so
    /// that only the DISCONNECT went out, the broker dropped the will with it, and the retained
    /// status said online for good.
    public func close(now: Now, timeout: Duration = .seconds(1)) {
        guard let handle else { return }
        if session.state == .connected {
            if let topic = settings.statusTopic {
                var mid: Int32 = 0
                _ = publishRaw(handle, topic: topic, payload: OwnTracks.lastWill(connectedAt: now.wall), retain: true, qos: 0, mid: &mid)
            }
            mosquitto_disconnect(handle)
            let end = now.monotonicMicroseconds + Int64(timeout.components.seconds) * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000
            var fds = pollfd(fd: mosquitto_socket(handle), events: 0, revents: 0)
            while fds.fd >= 0, mosquitto_want_write(handle), Monotonic.microseconds() < end {
                fds.events = Int16(POLLOUT)
                _ = poll(&fds, 1, 100)
                if mosquitto_loop_write(handle, 8) != MOSQ_ERR_SUCCESS.rawValue { break }
            }
        }
        mosquitto_destroy(handle)
        self.handle = nil
        session.closed()
    }

    // MARK: - Connecting

    private func connect(now: Now) {
        guard let m = mosquitto_new(settings.clientID, settings.commandTopic == nil, Unmanaged.passUnretained(self).toOpaque()) else {
            failed("cannot create an MQTT client: \(String(cString: strerror(errno)))", now: now)
            return
        }
        handle = m
        connectedFlag = false
        statusMid = nil
        sessionPresent = false
        topics = [:]
        refusedReason = nil
        lostReason = nil
        lastLibraryError = nil
        lastMisc = now.monotonicMicroseconds
        session.connecting(now: now.monotonicMicroseconds)
        let v5 = settings.protocolVersion == .v5
        mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, Int32(v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311))
        mosquitto_int_option(m, MOSQ_OPT_SEND_MAXIMUM, Int32(max(1, settings.window)))
        mosquitto_connect_with_flags_callback_set(m) { _, obj, rc, flags in
            guard let obj else { return }
            let me = Unmanaged<MQTTPublisher>.fromOpaque(obj).takeUnretainedValue()
            if rc == 0 {
                me.connectedFlag = true
                me.sessionPresent = flags & 1 != 0
                me.subscribed = false
                if let topic = me.settings.commandTopic, let m = me.handle {
                    let rc = mosquitto_subscribe(m, nil, topic, 1)
                    if rc != MOSQ_ERR_SUCCESS.rawValue {
                        me.lastLibraryError = "cannot subscribe to \(topic): \(me.describe(rc))"
                    } else {
                        me.session.awaitingSetup()
                    }
                }
            } else {
                // MQTT 3.1.1 CONNACK codes 1–5; MQTT 5 reason codes from 0x80.
                let text = rc >= 0x80 ? String(cString: mosquitto_reason_string(rc)) : String(cString: mosquitto_connack_string(rc))
                me.refusedReason = "the broker refused the connection: \(text)"
                    + (rc == 4 || rc == 5 || rc == 0x86 || rc == 0x87 ? " (check username and password_file)" : "")
                    + (rc == 1 || rc == 0x84 ? " (set 'protocol: 3.1.1' in publish.mqtt for a broker without MQTT 5)" : "")
            }
        }
        mosquitto_disconnect_callback_set(m) { _, obj, rc in
            guard let obj else { return }
            let me = Unmanaged<MQTTPublisher>.fromOpaque(obj).takeUnretainedValue()
            if me.lostReason == nil, me.refusedReason == nil { me.lostReason = me.describe(rc) }
        }
        mosquitto_subscribe_callback_set(m) { _, obj, _, count, granted in
            guard let obj else { return }
            let me = Unmanaged<MQTTPublisher>.fromOpaque(obj).takeUnretainedValue()
            // A SUBACK whose return code is 0x80 or more refused the subscription (an ACL).
            me.session.setupAnswered()
            let code = count > 0 ? granted?[0] ?? 0 : 0
            if code >= 0x80 {
                me.subscriptionRefused = "\(String(cString: mosquitto_reason_string(code))) (0x\(String(code, radix: 16)))"
            } else {
                me.subscribed = true
                me.subscriptionRefused = nil
            }
        }
        mosquitto_message_callback_set(m) { _, obj, message in
            guard let obj, let message, let topic = message.pointee.topic else { return }
            let me = Unmanaged<MQTTPublisher>.fromOpaque(obj).takeUnretainedValue()
            // Exactly the command topic (a broker may deliver more to a shared session).
            let name = String(cString: topic)
            guard name == me.settings.commandTopic else { return }
            let count = Int(max(0, message.pointee.payloadlen))
            var payload: [UInt8] = []
            if let bytes = message.pointee.payload, count > 0 {
                payload = Array(UnsafeRawBufferPointer(start: bytes, count: min(count, Received.maxCopied)))
            }
            me.received.append(Received(topic: name, payload: payload, size: count, retained: message.pointee.retain))
        }
        mosquitto_publish_v5_callback_set(m) { _, obj, mid, reason, _ in
            guard let obj else { return }
            let me = Unmanaged<MQTTPublisher>.fromOpaque(obj).takeUnretainedValue()
            if mid == me.statusMid {
                me.statusMid = nil
                me.session.setupAnswered()
                return
            }
            let refusal = reason >= 0x80 ? "\(String(cString: mosquitto_reason_string(reason))) (0x\(String(reason, radix: 16)))" : nil
            me.session.acknowledged(mid: mid, reason: Int(reason), refusal: refusal)
        }
        mosquitto_log_callback_set(m) { _, obj, level, text in
            guard let obj, let text, level == MOSQ_LOG_ERR || level == MOSQ_LOG_WARNING else { return }
            let me = Unmanaged<MQTTPublisher>.fromOpaque(obj).takeUnretainedValue()
            me.lastLibraryError = String(cString: text)
        }
        if let username = settings.username {
            let rc = mosquitto_username_pw_set(m, username, settings.password)
            if rc != MOSQ_ERR_SUCCESS.rawValue { return failed("invalid username or password: \(describe(rc))", now: now) }
        }
        if let tls = settings.tls {
            var rc: Int32
            if let ca = tls.caFile {
                rc = mosquitto_tls_set(m, ca, nil, tls.certFile, tls.keyFile, nil)
            } else {
                rc = mosquitto_int_option(m, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
                if rc == MOSQ_ERR_SUCCESS.rawValue, let cert = tls.certFile {
                    rc = mosquitto_tls_set(m, nil, "/etc/ssl/certs", cert, tls.keyFile, nil)
                }
            }
            if rc == MOSQ_ERR_SUCCESS.rawValue { rc = mosquitto_tls_opts_set(m, 1, "tlsv1.2", nil) }
            if rc != MOSQ_ERR_SUCCESS.rawValue { return failed("cannot set up TLS: \(describe(rc))", now: now) }
        }
        if let topic = settings.statusTopic {
            let will = OwnTracks.lastWill(connectedAt: now.wall)
            _ = will.withCString { mosquitto_will_set(m, topic, Int32(strlen($0)), $0, 1, true) }
        }
        if v5, settings.commandTopic != nil, !Self.keepSessionOnConnect(m) {
            return failed("cannot ask the broker to keep the session (MQTT 5 session expiry)", now: now)
        }
        let rc = mosquitto_connect_async(m, settings.host, Int32(settings.port), Int32(settings.keepaliveSeconds))
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            failed(describe(rc), now: now)
        }
    }

    /// MQTT 5 ends a session when the connection closes unless CONNECT asks otherwise (the
    /// Session Expiry Interval; 3.1.1's clean session off had no end): the commands sent while
    /// geomon was away must wait for it. libmosquitto 2.0 takes CONNECT properties only in its
    /// blocking connect, which keeps them for every later connect of the handle; given a port
    /// it refuses (0), it stores them and returns before connecting, and the asynchronous
    /// connect that follows sends them. Whether the broker kept the session shows in CONNACK
    /// (`sessionPresent`), and `MQTTCommandsTests` checks that a command sent while geomon was
    /// down arrives.
    private static func keepSessionOnConnect(_ m: OpaquePointer) -> Bool {
        var properties: OpaquePointer?
        guard mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), UInt32.max) == MOSQ_ERR_SUCCESS.rawValue else {
            return false
        }
        defer { mosquitto_property_free_all(&properties) }
        // Port -1: refused after the properties are taken, before any connect.
        let rc = mosquitto_connect_bind_v5(m, "localhost", -1, 60, nil, properties)
        return rc == MOSQ_ERR_INVAL.rawValue
    }

    /// The connection attempt or the connection failed: drop the handle, back off.
    private func failed(_ reason: String, now: Now) {
        if let handle { mosquitto_destroy(handle) }
        handle = nil
        connectedFlag = false
        var text = reason
        if let detail = lastLibraryError, !text.contains(detail), reason.contains("TLS") || reason.contains("lost") {
            text += " (\(detail))"
        }
        let report = session.failed(text, now: now.monotonicMicroseconds)
        onReport?(report)
        // A message the drops refused is stored as refused now, not at the next connection.
        markAcknowledged(at: now.wall)
    }

    // MARK: - Sending

    /// Sends the oldest messages not yet sent on this connection, up to the window.
    private func fill(now: Now) {
        guard let handle, let window = session.sendWindow else { return }
        let rows: [StoredPublication]
        do {
            rows = try outbox.pendingPublications(after: window.after, limit: window.limit)
        } catch {
            onReport?(.storeFailed("\(error)"))
            return
        }
        session.read(rows.count, of: window.limit)
        for row in rows {
            let p = row.publication
            var mid: Int32 = 0
            let rc = p.payload.withCString { bytes in
                mosquitto_publish(handle, &mid, p.topic, Int32(strlen(bytes)), bytes, Int32(settings.qos), p.retain)
            }
            if rc == MOSQ_ERR_OVERSIZE_PACKET.rawValue || rc == MOSQ_ERR_PAYLOAD_SIZE.rawValue {
                // This message can never go (larger than the broker's maximum packet, or than
                // MQTT allows): refused, so the messages after it are not held up for ever.
                session.refusedUnsent(seq: row.seq, reason: "\(describe(rc)) (\(p.payload.utf8.count) bytes)")
                topics[row.seq] = p.topic
                continue
            }
            if rc != MOSQ_ERR_SUCCESS.rawValue {
                lostReason = describe(rc)
                return
            }
            session.sent(seq: row.seq, mid: mid, now: now.monotonicMicroseconds)
            if settings.qos > 0 { topics[row.seq] = p.topic }
        }
        markAcknowledged(at: now.wall)
    }

    private func publishRaw(_ handle: OpaquePointer, topic: String, payload: String, retain: Bool, qos: Int32 = 1, mid: inout Int32) -> Int32 {
        payload.withCString { bytes in
            mosquitto_publish(handle, &mid, topic, Int32(strlen(bytes)), bytes, qos, retain)
        }
    }

    /// The online status's message id on this connection, until its PUBACK.
    private var statusMid: Int32?

    fileprivate func describe(_ rc: Int32) -> String {
        switch rc {
        case MOSQ_ERR_ERRNO.rawValue: return String(cString: strerror(errno))
        case MOSQ_ERR_EAI.rawValue: return "cannot resolve \(settings.host): \(String(cString: gai_strerror(errno)))"
        case MOSQ_ERR_TLS.rawValue: return "TLS handshake failed (the broker's certificate is not trusted by ca_file, or does not name \(settings.host))"
        case MOSQ_ERR_CONN_LOST.rawValue: return "connection lost"
        case MOSQ_ERR_KEEPALIVE.rawValue: return "no answer from the broker within the keepalive (\(settings.keepaliveSeconds) s)"
        case MOSQ_ERR_NO_CONN.rawValue: return "not connected"
        default: return String(cString: mosquitto_strerror(rc))
        }
    }

    /// The system's clocks now (for callers without a loop of their own).
    public static func systemNow() -> Now {
        (WallClock.now(), Monotonic.microseconds())
    }

    /// For callers without a poll loop (`replay --publish`, `bench publish`): steps, waits at
    /// most `timeoutMilliseconds` (less when the publisher wants to run sooner) for its socket,
    /// and steps again with what arrived.
    public func pollAndStep(timeoutMilliseconds: Int32) {
        let now = Self.systemNow()
        let next = step(now: now)
        let timeout = min(timeoutMilliseconds, Int32(clamping: max(0, (next - now.monotonicMicroseconds + 999) / 1000)))
        guard let fd = fileDescriptor else {
            usleep(UInt32(max(1, timeout)) * 1000)
            step(now: Self.systemNow())
            return
        }
        var p = pollfd(fd: fd, events: pollEvents, revents: 0)
        _ = poll(&p, 1, timeout)
        step(revents: p.revents, now: Self.systemNow())
    }
}
