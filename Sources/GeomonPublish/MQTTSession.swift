/// The MQTT connection's protocol as a pure state machine: connect, the broker's answer,
/// the window of unacknowledged messages, PUBACKs, reconnect backoff and outage reports.
/// `MQTTPublisher` is its performer (libmosquitto's handle, the socket, the outbox); this
/// decides what to do and when, from inputs and `now` (monotonic microseconds), and is tested
/// synchronously.
public struct MQTTSession: Sendable {
    /// The connection as `geomon status` shows it.
    public enum State: Equatable, Sendable {
        case disconnected
        case connecting
        case connected
    }

    /// What the publisher reports (the daemon logs it).
    public enum Report: Equatable, Sendable {
        /// A connection was accepted; `pending` messages wait; `outage` how long it was down;
        /// `sessionPresent`: the broker kept geomon's session (false: it may have lost its
        /// retained messages too, which are then published again).
        case connected(pending: Int, outageSeconds: Double?, sessionPresent: Bool)
        /// Accepted again in an outage whose earlier connection was accepted and dropped
        /// before it served (logged quietly; the session may be new all the same).
        case reconnected(pending: Int, sessionPresent: Bool)
        /// The broker refused `count` messages (MQTT 5 PUBACK reasons), the first with `reason`
        /// on `topic`: they are kept as refused, not sent again.
        case refused(count: Int, reason: String, topic: String)
        /// The first failure of an outage (later attempts of the same outage are `retrying`).
        case unreachable(reason: String, retryIn: Duration)
        case retrying(reason: String, retryIn: Duration)
        /// The outbox could not be read or updated.
        case storeFailed(String)
    }

    public struct Settings: Equatable, Sendable {
        /// Messages sent and not yet acknowledged, at most.
        public var window: Int
        public var keepaliveSeconds: Int
        /// QoS 0 messages count as acknowledged once sent.
        public var qos: Int
        /// Reconnect backoff: doubling from `minBackoff` to `maxBackoff`.
        public var minBackoff: Duration
        public var maxBackoff: Duration
        /// The broker refuses a message by closing the connection (MQTT 3.1.1, which has no
        /// reason codes; an MQTT 5 broker says why, and states its maximum packet size).
        public var refusesByDropping: Bool
        public init(window: Int = 16, keepaliveSeconds: Int = 60, qos: Int = 1, minBackoff: Duration = .seconds(1), maxBackoff: Duration = .seconds(60),
                    refusesByDropping: Bool = false) {
            self.refusesByDropping = refusesByDropping
            self.window = window
            self.keepaliveSeconds = keepaliveSeconds
            self.qos = qos
            self.minBackoff = minBackoff
            self.maxBackoff = maxBackoff
        }
    }

    public let settings: Settings
    public private(set) var state: State = .disconnected
    /// Why the last attempt failed or the connection was lost.
    public private(set) var lastError: String?
    private var failures = 0
    /// When to connect again; nil: at once.
    private var reconnectAt: Int64?
    private var outageStart: Int64?
    /// When the current connection was accepted.
    private var connectedAt: Int64 = 0
    /// A connection was accepted since the outage began (and dropped before it served).
    private var acceptedInOutage = false
    /// A drop after acceptance was reported in this outage.
    private var droppedReported = false
    private var connectStarted: Int64 = 0
    /// mid → outbox seq of the messages sent on this connection and not yet acknowledged.
    private var inFlight: [Int32: Int64] = [:]
    private var acknowledged: [Int64] = []
    private var refused: [(seq: Int64, reason: String)] = []
    /// The newest outbox seq sent on this connection.
    public private(set) var lastSentSeq: Int64 = 0
    /// The outbox had no more than was sent (until `poke`).
    private var drained = false
    /// A message the broker may not take: the oldest in flight when a connection that had
    /// acknowledged nothing dropped (an MQTT 3.1.1 broker refuses a message by closing the
    /// connection, a larger one than its `max_packet_size` say). While it is suspected it goes
    /// out alone; `drops` counts the connections that dropped soon after it was sent with
    /// nothing else in flight.
    private var suspect: (seq: Int64, drops: Int)?
    /// Whether this connection had a message acknowledged, and when it last sent one.
    private var acknowledgedHere = false
    private var lastSentAt: Int64 = 0
    /// What the connection sends before the outbox (the online status, the command
    /// subscription) and has had no answer to: a suspect waits for them, so that a broker
    /// dropping the connection for one of them is not taken to refuse it.
    private var setupPending = 0
    /// Connections dropped soon after a lone suspect was sent that refuse it.
    public static let dropsThatRefuse = 3
    /// How soon after the send a drop counts: a broker refusing a message closes as it reads
    /// it, within a round trip; a lone message on a connection that lasts longer is
    /// acknowledged first (another client taking the session over, say, drops it later).
    public static let dropWithin: Duration = .seconds(2)

    public init(settings: Settings) {
        self.settings = settings
    }

    /// True when connected with nothing in flight and nothing more to send.
    public var isDrained: Bool { state == .connected && inFlight.isEmpty && drained }

    /// Messages sent and not acknowledged.
    public var inFlightCount: Int { inFlight.count }

    /// Whether a connection attempt is due (no connection, backoff over).
    public func wantsConnect(now: Int64) -> Bool {
        state == .disconnected && (reconnectAt.map { now >= $0 } ?? true)
    }

    /// A connection attempt started (a fresh handle): nothing of an earlier one carries over.
    public mutating func connecting(now: Int64) {
        state = .connecting
        connectStarted = now
        inFlight = [:]
        acknowledged = []
        lastSentSeq = 0
        drained = false
        acknowledgedHere = false
        setupPending = 0
    }

    /// The connection sent what comes before the outbox (a status, a subscription).
    public mutating func awaitingSetup() {
        setupPending += 1
    }

    /// The broker answered one of those (PUBACK, SUBACK).
    public mutating func setupAnswered() {
        setupPending = max(0, setupPending - 1)
    }

    /// The broker accepted the connection. The backoff and the outage end only once the
    /// connection serves (`progressed`): a broker that accepts and then drops every connection
    /// (as a message arrives, or for a client that took its id) is retried ever more slowly, as
    /// one outage, with one notice for its first acceptance and `reconnected` after.
    public mutating func accepted(now: Int64, pending: Int, sessionPresent: Bool = false) -> Report {
        state = .connected
        lastError = nil
        connectedAt = now
        if acceptedInOutage { return .reconnected(pending: pending, sessionPresent: sessionPresent) }
        acceptedInOutage = outageStart != nil
        let outage = outageStart.map { Double(now - $0) / 1e6 }
        return .connected(pending: pending, outageSeconds: outage, sessionPresent: sessionPresent)
    }

    /// The connection serves: a message acknowledged by the broker, or connected for a
    /// keepalive period (`serving(now:)`).
    private mutating func progressed() {
        failures = 0
        outageStart = nil
        acceptedInOutage = false
        droppedReported = false
    }

    /// Called as time passes: a connection up for a keepalive period serves, even with nothing
    /// to send (a PING went both ways).
    public mutating func serving(now: Int64) {
        guard state == .connected, now - connectedAt >= Int64(settings.keepaliveSeconds) * 1_000_000 else { return }
        if failures > 0 || outageStart != nil { progressed() }
        // A broker that has not answered the setup within a keepalive never will.
        setupPending = 0
    }

    /// The attempt or the connection failed: back off. The handle is to be destroyed.
    public mutating func failed(_ reason: String, now: Int64) -> Report {
        let wasConnected = state == .connected
        if wasConnected, settings.refusesByDropping, !acknowledgedHere {
            if let oldest = inFlight.values.min() {
                suspectDropped(oldest, alone: inFlight.count == 1 && now - lastSentAt <= Self.dropWithin.microseconds, reason: reason)
            } else if suspect != nil {
                // Dropped with no message of the outbox in flight: not for the suspect.
                suspect?.drops = 0
            }
        }
        state = .disconnected
        inFlight = [:]
        lastError = reason
        failures += 1
        var delay = settings.minBackoff
        for _ in 1..<min(failures, 30) where delay < settings.maxBackoff { delay = delay * 2 }
        delay = min(delay, settings.maxBackoff)
        reconnectAt = now + delay.microseconds
        if outageStart == nil {
            outageStart = now
            return .unreachable(reason: reason, retryIn: delay)
        }
        if wasConnected, !droppedReported {
            // Accepted, then dropped before serving: said once an outage.
            droppedReported = true
            return .unreachable(reason: reason + " (the broker accepted the connection and dropped it before it served)", retryIn: delay)
        }
        return .retrying(reason: reason, retryIn: delay)
    }

    /// A connection that acknowledged nothing dropped with `seq` the oldest message in flight:
    /// it is suspected (sent alone from now on), and refused once `dropsThatRefuse`
    /// connections dropped soon after it went out alone: the messages after it go on, and it
    /// is kept as a dead letter (`geomon publish retry` sends it again).
    private mutating func suspectDropped(_ seq: Int64, alone: Bool, reason: String) {
        let drops = (suspect?.seq == seq ? suspect?.drops ?? 0 : 0) + (alone ? 1 : 0)
        guard drops >= Self.dropsThatRefuse else {
            suspect = (seq, drops)
            return
        }
        suspect = nil
        refused.append((seq, "the broker closed the connection each time it was sent (\(drops) times, alone): a message it does not take "
                            + "(an MQTT 3.1.1 broker does not say why; larger than its max_packet_size?); last: \(reason)"))
    }

    /// A clean stop (no failure, no backoff).
    public mutating func closed() {
        state = .disconnected
        inFlight = [:]
    }

    /// A connection still waiting for the broker's answer after the keepalive: a failure.
    public func connectTimedOut(now: Int64) -> Bool {
        state == .connecting && now - connectStarted > Int64(settings.keepaliveSeconds) * 1_000_000
    }

    /// Skips the backoff: connect on the next step (`geomon publish retry`, SIGUSR1).
    public mutating func reconnectNow() {
        if state == .disconnected { reconnectAt = nil }
    }

    /// New messages were committed.
    public mutating func poke() {
        drained = false
    }

    /// What to send now: the rows after `after`, at most `limit`; nil when nothing.
    public var sendWindow: (after: Int64, limit: Int)? {
        guard state == .connected, !drained || !inFlight.isEmpty else { return nil }
        // A suspect goes out alone, once what came before it on the connection was answered.
        if suspect != nil, setupPending > 0 { return nil }
        let room = (suspect == nil ? settings.window : 1) - inFlight.count
        return room > 0 ? (lastSentSeq, room) : nil
    }

    /// `count` rows came back for a window of `limit`: fewer means the outbox is drained.
    public mutating func read(_ count: Int, of limit: Int) {
        if count < limit { drained = true }
    }

    /// Outbox row `seq` cannot be sent at all (larger than the broker takes): refused as a
    /// message the broker refused, and the window moves past it.
    public mutating func refusedUnsent(seq: Int64, reason: String) {
        lastSentSeq = seq
        refused.append((seq, reason))
    }

    /// Outbox row `seq` went out as message `mid` (at `now`).
    public mutating func sent(seq: Int64, mid: Int32, now: Int64 = 0) {
        lastSentSeq = seq
        lastSentAt = now
        if settings.qos == 0 {
            acknowledged.append(seq)
        } else {
            inFlight[mid] = seq
        }
    }

    /// The broker acknowledged message `mid` with MQTT 5 reason code `reason` (0 with MQTT
    /// 3.1.1, which has none): below 0x80 it took the message (0x10, no subscribers, too);
    /// from 0x80 it refused it (`refusal` words it).
    public mutating func acknowledged(mid: Int32, reason: Int = 0, refusal: String? = nil) {
        guard let seq = inFlight.removeValue(forKey: mid) else { return }
        progressed()
        acknowledgedHere = true
        suspect = nil
        if reason >= 0x80 {
            refused.append((seq, refusal ?? "reason code 0x\(String(reason, radix: 16))"))
        } else {
            acknowledged.append(seq)
        }
    }

    /// The rows acknowledged since the last call (to be marked in the outbox).
    public mutating func takeAcknowledged() -> [Int64] {
        defer { acknowledged.removeAll() }
        return acknowledged
    }

    /// The rows refused since the last call, with why (to be marked in the outbox).
    public mutating func takeRefused() -> [(seq: Int64, reason: String)] {
        defer { refused.removeAll() }
        return refused
    }

    /// Puts refusals back whose marking failed.
    public mutating func putBackRefused(_ rows: [(seq: Int64, reason: String)]) {
        refused.insert(contentsOf: rows, at: 0)
    }

    /// Puts rows back whose marking failed (the next step tries again).
    public mutating func putBack(_ seqs: [Int64]) {
        acknowledged.insert(contentsOf: seqs, at: 0)
    }

    /// When the performer should step again without input: at the reconnect while down;
    /// every second while connecting (the connect timeout); connected, often enough for the
    /// keepalive ping.
    public func nextWake(now: Int64) -> Int64 {
        switch state {
        case .disconnected: reconnectAt ?? now
        case .connecting: now + 1_000_000
        case .connected: now + Int64(settings.keepaliveSeconds) * 500_000
        }
    }
}

extension Duration {
    var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
