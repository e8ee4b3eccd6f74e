import GeomonPublish
import Testing

/// MQTT's protocol decisions, synchronously: no broker, no socket.
struct MQTTSessionTests {
    static let second: Int64 = 1_000_000

    @Test func aConnectionSendsTheWindowAndMoreAsAcknowledgementsCome() {
        var session = MQTTSession(settings: .init(window: 2))
        #expect(session.wantsConnect(now: 0))
        session.connecting(now: 0)
        #expect(session.sendWindow == nil, "nothing before the broker accepted")
        #expect(session.accepted(now: 5, pending: 3) == .connected(pending: 3, outageSeconds: nil, sessionPresent: false))
        #expect(session.sendWindow! == (0, 2))
        session.read(2, of: 2)
        session.sent(seq: 10, mid: 1)
        session.sent(seq: 11, mid: 2)
        #expect(session.sendWindow == nil, "the window is full")
        session.acknowledged(mid: 1)
        #expect(session.takeAcknowledged() == [10])
        #expect(session.sendWindow! == (11, 1))
        session.read(0, of: 1)
        session.acknowledged(mid: 2)
        #expect(session.takeAcknowledged() == [11])
        #expect(session.isDrained)
        // New messages: send again from the last one sent.
        session.poke()
        #expect(!session.isDrained && session.sendWindow! == (11, 2))
    }

    /// MQTT 5 PUBACK reason codes: below 0x80 the broker took the message (0x10: nobody
    /// subscribed, still taken); from 0x80 it refused it, and the row is a refusal, not an
    /// acknowledgement; the window moves on either way.
    @Test func pubackReasonsSplitAcknowledgementsFromRefusals() {
        var session = MQTTSession(settings: .init(window: 3))
        session.connecting(now: 0)
        _ = session.accepted(now: 1, pending: 3, sessionPresent: true)
        session.read(3, of: 3)
        session.sent(seq: 1, mid: 1)
        session.sent(seq: 2, mid: 2)
        session.sent(seq: 3, mid: 3)
        session.acknowledged(mid: 1, reason: 0x10)
        session.acknowledged(mid: 2, reason: 0x87, refusal: "Not authorized (0x87)")
        session.acknowledged(mid: 3, reason: 0x97)
        #expect(session.takeAcknowledged() == [1])
        let refused = session.takeRefused()
        #expect(refused.map(\.seq) == [2, 3] && refused.map(\.reason) == ["Not authorized (0x87)", "reason code 0x97"])
        #expect(session.inFlightCount == 0 && session.takeRefused().isEmpty)
    }

    @Test func failuresBackOffDoublingUpToTheCapAndReportTheOutageOnce() {
        var session = MQTTSession(settings: .init(minBackoff: .seconds(1), maxBackoff: .seconds(4)))
        session.connecting(now: 0)
        #expect(session.failed("refused", now: 0) == .unreachable(reason: "refused", retryIn: .seconds(1)))
        #expect(!session.wantsConnect(now: Self.second - 1) && session.wantsConnect(now: Self.second))
        var now = Self.second
        for delay in [2, 4, 4] {
            session.connecting(now: now)
            #expect(session.failed("refused", now: now) == .retrying(reason: "refused", retryIn: .seconds(Int64(delay))))
            #expect(session.nextWake(now: now) == now + Int64(delay) * Self.second)
            now += Int64(delay) * Self.second
        }
        session.connecting(now: now)
        #expect(session.accepted(now: now + Self.second, pending: 0) == .connected(pending: 0, outageSeconds: 12, sessionPresent: false))
        #expect(session.lastError == nil)
        // Connected for a keepalive: the connection serves, and the next outage starts the
        // backoff afresh.
        now += 61 * Self.second
        session.serving(now: now)
        #expect(session.failed("lost", now: now) == .unreachable(reason: "lost", retryIn: .seconds(1)))
    }

    /// A broker that accepts and then drops the connection as a message arrives (another
    /// client taking the session over; with MQTT 3.1.1 also a refusal, below) is one outage
    /// retried ever more slowly, not a reconnect a second; the first acknowledgement ends it.
    @Test func aConnectionLostBeforeItsFirstAcknowledgementKeepsBackingOff() {
        var session = MQTTSession(settings: .init(minBackoff: .seconds(1), maxBackoff: .seconds(60)))
        var now: Int64 = 0
        var reports: [MQTTSession.Report] = []
        for _ in 0..<4 {
            session.connecting(now: now)
            reports.append(session.accepted(now: now, pending: 1))
            session.read(1, of: 16)
            session.sent(seq: 1, mid: 1)
            session.serving(now: now + Self.second)
            reports.append(session.failed("lost", now: now + Self.second))
            now += 100 * Self.second
        }
        let dropped = "lost (the broker accepted the connection and dropped it before it served)"
        #expect(reports == [.connected(pending: 1, outageSeconds: nil, sessionPresent: false), .unreachable(reason: "lost", retryIn: .seconds(1)),
                            .connected(pending: 1, outageSeconds: 99, sessionPresent: false), .unreachable(reason: dropped, retryIn: .seconds(2)),
                            .reconnected(pending: 1, sessionPresent: false), .retrying(reason: "lost", retryIn: .seconds(4)),
                            .reconnected(pending: 1, sessionPresent: false), .retrying(reason: "lost", retryIn: .seconds(8))])
        session.connecting(now: now)
        _ = session.accepted(now: now, pending: 1)
        session.read(1, of: 16)
        session.sent(seq: 1, mid: 1)
        session.acknowledged(mid: 1)
        #expect(session.failed("lost", now: now) == .unreachable(reason: "lost", retryIn: .seconds(1)))
    }

    /// A row that cannot be sent at all is refused and the window moves past it.
    @Test func aMessageThatCannotBeSentIsRefusedAndTheWindowMovesOn() {
        var session = MQTTSession(settings: .init())
        session.connecting(now: 0)
        _ = session.accepted(now: 0, pending: 2)
        session.read(2, of: 16)
        session.refusedUnsent(seq: 1, reason: "too large")
        session.sent(seq: 2, mid: 1)
        #expect(session.takeRefused().map(\.seq) == [1])
        #expect(session.sendWindow! == (2, 15))
    }

    @Test func messagesInFlightWhenTheConnectionDiesAreSentAgainOnTheNext() {
        var session = MQTTSession(settings: .init())
        session.connecting(now: 0)
        _ = session.accepted(now: 0, pending: 1)
        session.read(1, of: 16)
        session.sent(seq: 7, mid: 1)
        _ = session.failed("lost", now: 0)
        session.reconnectNow()
        #expect(session.wantsConnect(now: 0))
        session.connecting(now: 0)
        _ = session.accepted(now: 0, pending: 1)
        // From the oldest message not acknowledged: the outbox after seq 0.
        #expect(session.sendWindow! == (0, 16))
        // With MQTT 3.1.1 (a refusal closes the connection): alone until it is acknowledged.
        var v311 = MQTTSession(settings: .init(refusesByDropping: true))
        v311.connecting(now: 0)
        _ = v311.accepted(now: 0, pending: 1)
        v311.sent(seq: 7, mid: 1)
        _ = v311.failed("lost", now: 0)
        v311.reconnectNow()
        v311.connecting(now: 0)
        _ = v311.accepted(now: 0, pending: 1)
        #expect(v311.sendWindow! == (0, 1))
        v311.sent(seq: 7, mid: 1)
        v311.acknowledged(mid: 1)
        #expect(v311.sendWindow! == (7, 16))
    }

    @Test func aBrokerThatNeverAnswersTimesOutAfterTheKeepalive() {
        var session = MQTTSession(settings: .init(keepaliveSeconds: 10))
        session.connecting(now: 0)
        #expect(!session.connectTimedOut(now: 10 * Self.second))
        #expect(session.connectTimedOut(now: 10 * Self.second + 1))
    }

    @Test func qosZeroCountsAMessageAsAcknowledgedOnceSent() {
        var session = MQTTSession(settings: .init(qos: 0))
        session.connecting(now: 0)
        _ = session.accepted(now: 0, pending: 1)
        session.sent(seq: 3, mid: 9)
        #expect(session.takeAcknowledged() == [3] && session.inFlightCount == 0)
    }

    /// An MQTT 3.1.1 broker refuses a message by closing the connection (one larger than its
    /// `max_packet_size`, say): the oldest message in flight when a connection that had
    /// acknowledged nothing dropped is suspected and sent alone; three connections dropped
    /// soon after it went out alone refuse it, and the window opens again for the rest.
    @Test func aMessageTheBrokerDropsTheConnectionForIsRefusedAfterThreeLoneDrops() {
        var session = MQTTSession(settings: .init(refusesByDropping: true))
        var now: Int64 = 0
        func attempt(sending seqs: [Int64], dropAfter: Int64 = Self.second / 10) {
            session.reconnectNow()
            session.connecting(now: now)
            _ = session.accepted(now: now, pending: 2)
            for (k, seq) in seqs.enumerated() { session.sent(seq: seq, mid: Int32(k + 1), now: now) }
            _ = session.failed("connection lost", now: now + dropAfter)
            now += 100 * Self.second
        }
        session.connecting(now: now)
        _ = session.accepted(now: now, pending: 2)
        #expect(session.sendWindow! == (0, 16))
        session.sent(seq: 1, mid: 1, now: now)
        session.sent(seq: 2, mid: 2, now: now)
        _ = session.failed("connection lost", now: now + Self.second / 10)
        now += 100 * Self.second
        // Suspected: alone from now on; a drop long after the send (a keepalive) does not count.
        session.reconnectNow()
        session.connecting(now: now)
        _ = session.accepted(now: now, pending: 2)
        #expect(session.sendWindow! == (0, 1))
        session.sent(seq: 1, mid: 1, now: now)
        _ = session.failed("connection lost", now: now + 90 * Self.second)
        now += 100 * Self.second
        attempt(sending: [1])
        attempt(sending: [1])
        #expect(session.takeRefused().isEmpty)
        attempt(sending: [1])
        let refused = session.takeRefused()
        #expect(refused.map(\.seq) == [1])
        #expect(refused.first?.reason.hasPrefix("the broker closed the connection each time it was sent (3 times, alone)") == true)
        session.reconnectNow()
        session.connecting(now: now)
        _ = session.accepted(now: now, pending: 1)
        #expect(session.sendWindow! == (0, 16))
    }

    /// A suspect the broker acknowledges was not the cause: the window opens again.
    @Test func anAcknowledgedSuspectIsCleared() {
        var session = MQTTSession(settings: .init(refusesByDropping: true))
        session.connecting(now: 0)
        _ = session.accepted(now: 0, pending: 2)
        session.sent(seq: 1, mid: 1, now: 0)
        session.sent(seq: 2, mid: 2, now: 0)
        _ = session.failed("connection lost", now: 1000)
        session.reconnectNow()
        session.connecting(now: 10 * Self.second)
        _ = session.accepted(now: 10 * Self.second, pending: 2)
        #expect(session.sendWindow! == (0, 1))
        session.sent(seq: 1, mid: 1, now: 10 * Self.second)
        session.acknowledged(mid: 1)
        #expect(session.sendWindow! == (1, 16))
        #expect(session.takeRefused().isEmpty)
    }

    /// A broker that drops the connection for what comes before the outbox (the online status,
    /// the command subscription: an ACL, retained messages not allowed) does not get the
    /// suspect refused: it waits for their answers, and a drop with nothing of the outbox in
    /// flight starts its count again. MQTT 5 brokers say why they refuse: no suspect at all.
    @Test func aDropForTheSetupIsNotCountedAgainstTheSuspect() {
        var session = MQTTSession(settings: .init(refusesByDropping: true))
        var now: Int64 = 0
        func connect() {
            session.reconnectNow()
            session.connecting(now: now)
            _ = session.accepted(now: now, pending: 1)
            session.awaitingSetup()
        }
        connect()
        session.setupAnswered()
        session.sent(seq: 1, mid: 2, now: now)
        session.sent(seq: 2, mid: 3, now: now)
        _ = session.failed("lost", now: now + 1000)
        now += 100 * Self.second
        for _ in 0..<2 {
            connect()
            session.setupAnswered()
            #expect(session.sendWindow! == (0, 1))
            session.sent(seq: 1, mid: 2, now: now)
            _ = session.failed("lost", now: now + 1000)
            now += 100 * Self.second
        }
        // The third: dropped before the status was answered; the suspect was not sent.
        connect()
        #expect(session.sendWindow == nil)
        // (A broker that does not answer within a keepalive never will: it goes then.)
        var patient = session
        patient.serving(now: now + 60 * Self.second)
        #expect(patient.sendWindow! == (0, 1))
        _ = session.failed("lost", now: now + 1000)
        now += 100 * Self.second
        connect()
        session.setupAnswered()
        session.sent(seq: 1, mid: 2, now: now)
        _ = session.failed("lost", now: now + 1000)
        #expect(session.takeRefused().isEmpty)
        var v5 = MQTTSession(settings: .init())
        for k in 0..<5 {
            v5.reconnectNow()
            v5.connecting(now: Int64(k) * 100 * Self.second)
            _ = v5.accepted(now: Int64(k) * 100 * Self.second, pending: 1)
            v5.sent(seq: 1, mid: 1, now: Int64(k) * 100 * Self.second)
            _ = v5.failed("lost", now: Int64(k) * 100 * Self.second + 1000)
        }
        #expect(v5.takeRefused().isEmpty)
    }
}
