import Foundation
import GeomonCore
import GeomonSources
import GeomonTestSupport
import Testing

/// Waits on the source's descriptor (as the daemon does) and collects its events until `done`
/// says so or `timeout` passes.
func pump(_ source: GPSDSource, timeout: Duration = .seconds(30), until done: ([GPSDSource.Event]) -> Bool) -> [GPSDSource.Event] {
    var events: [GPSDSource.Event] = []
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline, !done(events) {
        guard let fd = source.fileDescriptor else { break }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, 200)
        events += source.readAvailable()
    }
    return events
}

func fixes(_ events: [GPSDSource.Event]) -> [Fix] {
    events.compactMap { if case .fix(let f) = $0 { f } else { nil } }
}

/// GPSDSource against a real gpsd fed by gpsfake. Under CI=true a missing gpsd fails.
@Suite(.serialized, .timeLimit(.minutes(2)), .enabled(if: GPSFakeHarness.shouldRun))
struct GPSDSourceTests {
    /// The fixes libgps delivers for a log equal those our NMEA reader gets from the same log:
    /// same times (after gpsd 3.22's 1024-week shift), positions within 1e-6°, same accuracy.
    @Test(arguments: ["bu353s4.log", "nmea-rtk.log"])
    func fixesThroughGPSDMatchTheNMEAReader(file: String) throws {
        let log = TestSupport.fixture("tracks/\(file)")
        let expected = try TrackReader.read(path: log.path).fixes
        // gpsfake plays the log once a client connects; on a loaded 2-core machine it can play
        // all of it before the watch is on (no fix at all): then the scenario runs once more.
        var got: [Fix] = []
        for _ in 0..<2 where got.isEmpty {
            let gpsfake = try GPSFakeHarness(log: log, cycleSeconds: 0.03)
            defer { gpsfake.stop() }
            let source = GPSDSource(port: String(gpsfake.port))
            #expect(try source.connect() == [.stateChanged(.connected)])
            try source.watch(enabled: true)
            got = fixes(pump(source) { fixes($0).count >= expected.count || $0.contains(.stateChanged(.disconnected(reason: "connection closed by gpsd"))) })
        }
        // Sentences played before the watch was on are lost; the rest must all be there.
        #expect(got.count >= expected.count - 5, "got \(got.count) of \(expected.count)")
        var byTime: [UTCTime: Fix] = [:]
        for fix in expected { byTime[GPSDLogTests.gpsd322Time(fix.time)] = fix }
        for fix in got {
            let mine = try #require(byTime[fix.time], "gpsd fix at \(fix.time) not in the NMEA reader's fixes")
            #expect(abs(mine.coordinate.latitude - fix.coordinate.latitude) <= 1e-6)
            #expect(abs(mine.coordinate.longitude - fix.coordinate.longitude) <= 1e-6)
            #expect(abs(mine.horizontalAccuracyMeters - fix.horizontalAccuracyMeters) < 0.01)
            #expect(fix.source == .gnss)
        }
        let times = got.map(\.time)
        #expect(times == times.sorted() && Set(times).count == times.count, "one fix per epoch, in order")
    }

    /// A host that takes the connection's packets and never answers (here a listener whose
    /// backlog is full: the kernel drops the SYNs) fails the connect after its timeout, with a
    /// reason; libgps's blocking connect alone held the caller (the daemon's loop) for the two
    /// minutes of SYN retries.
    @Test func aHostThatNeverAnswersFailsTheConnectInSeconds() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                try #require(bind(listener, raw, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, raw, &length) == 0)
            }
        }
        let port = String(UInt16(bigEndian: address.sin_port))
        // The one connection the backlog holds; the next SYNs are dropped.
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(filler) }
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(filler, $0, length) } }
        let source = GPSDSource(port: port)
        let started = ContinuousClock.now
        #expect { try source.connect() } throws: { error in
            (error as? GPSDError).map { $0.code == .connectFailed && $0.message.contains("no answer") } ?? false
        }
        // Well short of the SYN retries; the timeout itself is 3 s.
        #expect(ContinuousClock.now - started < .seconds(30))
        guard case .disconnected = source.state else { Issue.record("state \(source.state)"); return }
    }

    @Test func gpsdNotRunningIsAClearErrorAndReconnectWorksWhenItComesUp() throws {
        let port = try GPSFakeHarness.freePort()
        let source = GPSDSource(port: String(port))
        try source.watch(enabled: true) // remembered while disconnected
        #expect { try source.connect() } throws: { error in
            guard let error = error as? GPSDError else { return false }
            return error.code == .connectFailed && error.endpoint == "127.0.0.1:\(port)" && !error.message.isEmpty
        }
        guard case .disconnected(let reason) = source.state else { Issue.record("state \(source.state)"); return }
        #expect(!reason.isEmpty)
        #expect(source.fileDescriptor == nil)
        #expect(source.readAvailable().isEmpty)
        #expect(source.backoff.failures == 0)
        let first = source.backoff.failed()
        #expect(first < .seconds(1))

        let gpsfake = try GPSFakeHarness(log: TestSupport.fixture("tracks/nmea-rtk.log"), port: port, cycleSeconds: 0.03)
        defer { gpsfake.stop() }
        #expect(try source.connect() == [.stateChanged(.connected)])
        #expect(source.state == .connected)
        #expect(source.backoff.failures == 1, "a connection resets the backoff once it delivers data")
        #expect(source.fileDescriptor != nil)
        let got = fixes(pump(source) { !fixes($0).isEmpty })
        #expect(!got.isEmpty, "the remembered watch was sent on connect")
        #expect(source.backoff.failures == 0)
    }

    @Test func gpsdKilledMidStreamGivesDisconnectedAndARestartedGPSDIsReconnected() throws {
        let gpsfake = try GPSFakeHarness(log: TestSupport.fixture("tracks/nmea-rtk.log"), cycleSeconds: 0.03)
        let source = GPSDSource(port: String(gpsfake.port))
        try source.connect()
        try source.watch(enabled: true)
        #expect(!fixes(pump(source) { !fixes($0).isEmpty }).isEmpty)
        gpsfake.stop()
        let events = pump(source, timeout: .seconds(10)) { $0.contains { if case .stateChanged(.disconnected) = $0 { true } else { false } } }
        #expect(events.contains { if case .stateChanged(.disconnected) = $0 { true } else { false } })
        guard case .disconnected = source.state else { Issue.record("state \(source.state)"); return }
        #expect(source.fileDescriptor == nil)
        #expect(throws: GPSDError.self) { try source.connect() }
        #expect(source.readAvailable().isEmpty)

        // gpsd comes back on the same port: the source reconnects and the watch is re-sent.
        let restarted = try GPSFakeHarness(log: TestSupport.fixture("tracks/nmea-rtk.log"), port: gpsfake.port, cycleSeconds: 0.03)
        defer { restarted.stop() }
        #expect(try source.connect() == [.stateChanged(.connected)])
        #expect(!fixes(pump(source) { !fixes($0).isEmpty }).isEmpty)
    }

    /// A connection opened while the watch is off (the receiver switched off) after a failure:
    /// gpsd's answer to the watch's state resets the backoff, not the greeting alone.
    @Test func aConnectionWithTheWatchOffResetsTheBackoffOnceGpsdAnswers() throws {
        let gpsfake = try GPSFakeHarness(log: TestSupport.fixture("tracks/telit-he910.log"), cycleSeconds: 0.01)
        defer { gpsfake.stop() }
        let source = GPSDSource(port: String(gpsfake.port))
        _ = source.backoff.failed()
        try source.connect()
        #expect(source.watchEnabled == false)
        let events = pump(source, timeout: .seconds(10)) { _ in source.backoff.failures == 0 }
        #expect(source.backoff.failures == 0, "gpsd answered the watch's state")
        #expect(fixes(events).isEmpty && source.state == .connected)
    }

    /// Disabling the watch stops the reports (so gpsd may power the receiver down); enabling it
    /// again brings them back.
    @Test func disablingTheWatchStopsFixes() throws {
        let gpsfake = try GPSFakeHarness(log: TestSupport.fixture("tracks/telit-he910.log"), cycleSeconds: 0.01)
        defer { gpsfake.stop() }
        let source = GPSDSource(port: String(gpsfake.port))
        try source.connect()
        try source.watch(enabled: true)
        #expect(!fixes(pump(source) { !fixes($0).isEmpty }).isEmpty)
        try source.watch(enabled: false)
        _ = pump(source, timeout: .milliseconds(500)) { _ in false } // what was already in flight
        let whileOff = pump(source, timeout: .seconds(2)) { _ in false }
        #expect(fixes(whileOff).isEmpty)
        try source.watch(enabled: true)
        #expect(!fixes(pump(source) { !fixes($0).isEmpty }).isEmpty)
    }
}

/// GPSDSource against a TCP server that accepts each connection and closes it at once (a
/// gpsd crashing on every client, a wrong service on the port): no gpsd needed.
struct GPSDSourceBackoffTests {
    /// `greeting`: the server sends gpsd's VERSION banner before closing, as gpsd does on
    /// every accept; a greeting alone is no connection that serves.
    @Test(arguments: [false, true])
    func aServerThatAcceptsAndClosesAtOnceIsRetriedEverMoreSlowly(greeting: Bool) throws {
        let listener = try AcceptingSocket()
        defer { close(listener.fd) }
        let source = GPSDSource(port: String(listener.port))
        var delays: [Duration] = []
        for _ in 0..<6 {
            #expect(try source.connect() == [.stateChanged(.connected)])
            listener.acceptAndClose(sending: greeting ? #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"# + "\r\n" : "")
            let events = pump(source, timeout: .seconds(10)) { $0.contains { if case .stateChanged(.disconnected) = $0 { true } else { false } } }
            #expect(events.contains { if case .stateChanged(.disconnected) = $0 { true } else { false } })
            delays.append(source.backoff.failed()) // what the daemon does on `.disconnected`
        }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4)])
    }
}

/// A listening TCP socket on a free loopback port.
private struct AcceptingSocket {
    let fd: Int32
    let port: UInt16

    init() throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = fd
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        if !listening { close(fd) }
        try #require(listening, "bind/listen: \(String(cString: strerror(errno)))")
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Takes every connection waiting in the backlog (the source's check that the host answers
    /// is one, its connection another), sends each `text` and closes it.
    func acceptAndClose(sending text: String = "") {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, 200) > 0 {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            if !text.isEmpty { _ = Array(text.utf8).withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) } }
            close(client)
        }
    }
}

struct ReconnectBackoffTests {
    @Test func delaysDoubleFromUnderASecondUpToTheCap() {
        var backoff = ReconnectBackoff()
        let delays = (0..<7).map { _ in backoff.failed() }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4)])
        backoff.succeeded()
        #expect(backoff.failed() == .milliseconds(250))
    }

    @Test func nextAttemptIsAnInstantNotASleep() {
        var backoff = ReconnectBackoff(initial: .milliseconds(100), cap: .seconds(1))
        let now = ContinuousClock.now
        #expect(backoff.nextAttempt(after: now) == now + .milliseconds(100))
        #expect(backoff.nextAttempt(after: now) == now + .milliseconds(200))
    }
}
