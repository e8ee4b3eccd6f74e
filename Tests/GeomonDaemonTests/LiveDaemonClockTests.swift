import Foundation
import GeomonCore
import GeomonDaemon
import GeomonEvaluation
import GeomonFormat
import GeomonSources
import GeomonStore
import GeomonTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The receiver, for the live daemon on a manual clock: replay's receiver model behind gpsd's
/// shape. The watch switches the model on and off at the daemon's time; fixes the model has
/// due by then are readable on a pipe the daemon polls. (A physical receiver is what cannot run
/// here; the daemon's loop, timers, clock and store are the real ones.)
final class ModelFeed: GNSSFeed {
    var endpoint: String { "receiver-model" }
    private(set) var state: GPSDSource.State = .disconnected(reason: "not connected yet")
    var backoff = ReconnectBackoff()
    private var model: ReceiverModel
    private var started = false
    private let pipeFDs: [Int32]
    /// The daemon's time (set once the daemon exists).
    var now: () -> UTCTime = { UTCTime(millisecondsSince1970: 0) }

    init(track: [Fix], settings: ReceiverSettings, interpolationMaxGap: Duration = .seconds(60)) {
        // The same receiver as replay's (its tracking interval too).
        model = ReceiverModel(track: track, settings: settings, interpolationMaxGap: interpolationMaxGap,
                              trackingInterval: ReplayRun.Options().trackingInterval)
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        pipeFDs = fds
    }

    deinit { for fd in pipeFDs { close(fd) } }

    var fileDescriptor: Int32? { state == .connected ? pipeFDs[0] : nil }
    /// A model has no device to write to: its power is the watch.
    var reportingDevice: String? { nil }
    var listedDevice: String? { nil }
    func sendToDevice(_ bytes: [UInt8], device: String) throws(GPSDError) {}

    func connect() throws(GPSDError) -> [GPSDSource.Event] {
        guard state != .connected else { return [] }
        state = .connected
        return [.stateChanged(.connected)]
    }

    private(set) var watchEnabled = false
    /// The watch's switches and keepalives, on the receiver's clock.
    private(set) var watchLog: [(time: UTCTime, what: String)] = []

    func keepAlive() throws(GPSDError) {
        watchLog.append((now(), "keepalive"))
    }

    func watch(enabled: Bool, device: String?) throws(GPSDError) {
        watchEnabled = enabled
        watchLog.append((now(), enabled ? "on" : "off"))
        if enabled {
            // The recording starts with the receiver on and its first fix in hand.
            if started { model.turnOn(at: now()) } else { model.start(at: now()) }
            started = true
        } else {
            model.turnOff(at: now())
        }
    }

    /// When the model's next fix is due (nil while off).
    var nextFixTime: UTCTime? { model.nextFix?.time }

    /// Makes the pipe readable: the daemon's poll sees input and calls `readAvailable`.
    func poke() {
        var byte: UInt8 = 1
        _ = write(pipeFDs[1], &byte, 1)
    }

    func readAvailable() -> [GPSDSource.Event] {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(pipeFDs[0], &buffer, buffer.count) > 0 {}
        var events: [GPSDSource.Event] = []
        while let fix = model.nextFix, fix.time <= now() {
            _ = model.takeFix()
            events.append(.fix(fix))
        }
        return events
    }

    func disconnect(reason: String) -> [GPSDSource.Event] {
        guard state == .connected else { return [] }
        state = .disconnected(reason: reason)
        return [.stateChanged(state)]
    }

    var hasPendingFix: Bool { false }
    var pendingFixTime: UTCTime? { nil }
    func flushPendingFix() -> [GPSDSource.Event] { [] }
}

/// `geomon run`'s daemon on a `ManualClock`: the same driver and machine as replay, its host
/// timers (gpsd reconnect, deliveries, heartbeat, reload) driven in microseconds, no sleeping.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct LiveDaemonClockTests {
    /// Lines the daemon logged.
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
        func count(_ text: String) -> Int { all.filter { $0.contains(text) }.count }
    }

    struct LiveRun {
        var events: [GeoEvent] = []
        var actions: [String] = []
        /// The receiver switches the daemon stored in its database.
        var stored: [ReceiverSwitch] = []
        /// The MQTT messages waiting in its outbox (the broker is never reachable here).
        var outbox: [Publication] = []
        /// The watch's switches and keepalives (`ModelFeed.watchLog`).
        var watchLog: [(time: UTCTime, what: String)] = []
    }

    /// Runs the daemon on a manual clock over `track`, the receiver model as its GNSS, until the
    /// recording ends (as replay does): the clock jumps to the next fix the model has due or the
    /// daemon's next wake, whichever comes first.
    /// - Parameter systemClockError: how far the system clock is off the receiver's time (a
    ///   Raspberry Pi without a real-time clock, or gpsd serving a log recorded years ago).
    static func runLive(profilePath: String, profile: Profile, track: [Fix], dir: TemporaryDirectory,
                        systemClockError: Duration = .zero, configure: (inout RunOptions) -> Void = { _ in }) throws -> LiveRun {
        let clock = ManualClock(wall: track[0].time + systemClockError)
        let feed = ModelFeed(track: track, settings: profile.policy.receiver)
        let lines = Lines()
        var options = RunOptions(profilePath: profilePath)
        options.databasePath = dir.path("live-\(UUID().uuidString).db")
        options.logLevel = .info
        configure(&options)
        let daemon = try LiveDaemon(options: options, log: Log(level: .info, journald: false, sink: { lines.append($0) }), clock: clock, gnss: feed)
        // The receiver's own clock: the recording's time, going on at the monotonic rate.
        let startMicros = clock.monotonicMicroseconds
        feed.now = { track[0].time + .microseconds(clock.monotonicMicroseconds - startMicros) }
        var run = LiveRun()
        daemon.onEffect = { effect, _ in
            switch effect {
            case let .commit(commit): run.events += commit.events
            case let .power(action): run.actions.append(action.text)
            default: break
            }
        }
        try daemon.begin()
        try daemon.runUntilIdle()
        let end = track[track.count - 1].time
        while true {
            // When the receiver has its next fix, on its own clock.
            let fixAt = feed.nextFixTime.map { startMicros + ($0 - track[0].time).wholeMilliseconds * 1000 }
            guard let target = [fixAt, daemon.nextWake].compactMap({ $0 }).min() else { break }
            let now = clock.monotonicMicroseconds
            if target > now { clock.advance(by: .microseconds(target - now)) }
            if feed.now() > end { break }
            if let fixAt, fixAt <= clock.monotonicMicroseconds { feed.poke() }
            try daemon.runUntilIdle()
        }
        _ = daemon.finish(code: 0)
        run.stored = try daemon.eventStore.receiverSwitchLog.all()
        run.outbox = try daemon.eventStore.outbox.pendingPublications(after: 0, limit: 100_000).map(\.publication)
        run.watchLog = feed.watchLog
        return run
    }

    static func writeProfile(_ profile: Profile, fences: [FenceShape], in dir: TemporaryDirectory, extra: String = "") throws -> String {
        var yaml = """
        version: 1
        name: \(profile.name)
        mode: \(profile.mode.rawValue)
        sources:
          gnss: {plugin: gpsd, min_accuracy: \(NumberText.shortest(profile.sources.gnss?.minAccuracyMeters ?? 50))m}
        policy:
          max_speed: \(NumberText.shortest(profile.policy.maxSpeedMetersPerSecond))m/s
          wake_margin: \(NumberText.shortest(profile.policy.wakeMarginMeters))m
          min_sleep: \(NumberText.shortest(profile.policy.minSleep.secondsValue))s
          max_sleep: \(NumberText.shortest(profile.policy.maxSleep.secondsValue))s
          receiver: {ttff_hot: \(NumberText.shortest(profile.policy.receiver.ttffHot.secondsValue))s, ttff_warm: \(NumberText.shortest(profile.policy.receiver.ttffWarm.secondsValue))s}
        \(extra)
        fences:

        """
        for (i, shape) in fences.enumerated() {
            guard case let .circle(center, radius) = shape else { continue }
            yaml += "  - {id: f\(i), circle: {lat: \(center.latitude), lon: \(center.longitude), radius: \(NumberText.shortest(radius))m}}\n"
        }
        return try dir.write("live.yaml", yaml)
    }

    static func evaluationProfile(mode: MonitoringMode = .regions, maxSpeed: Double = 45) -> Profile {
        var p = Profile(name: "live", mode: mode)
        p.sources.gnss = GNSSSourceSettings()
        p.policy.maxSpeedMetersPerSecond = maxSpeed
        p.policy.wakeMarginMeters = 20
        p.policy.minSleep = .seconds(10)
        p.policy.maxSleep = .seconds(600)
        p.policy.receiver.ttffHot = .seconds(2)
        return p
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var track: String
        var mode: MonitoringMode
        var spacingMeters: Double
        var maxSpeed: Double
        /// Approach bands and a repeated dwell on every fence (`defaults:`).
        var timeRules = false
        var testDescription: String { "\(track), \(mode.rawValue), fences every \(Int(spacingMeters)) m, max_speed \(Int(maxSpeed)) m/s\(timeRules ? ", approach and repeated dwell" : "")" }
    }

    /// Real recordings: a drive with fences every 500 m, and a walk with a receiver glitch that
    /// is an implausible jump at 10 m/s (the screen holds it).
    static let cases = [
        Case(track: "tracks/genivi_20100403_Z205_Switzerland_short.nmea", mode: .regions, spacingMeters: 500, maxSpeed: 45),
        Case(track: "tracks/gpxpy_cerknicko-jezero.gpx", mode: .regions, spacingMeters: 2000, maxSpeed: 10),
        Case(track: "tracks/gpxpy_cerknicko-jezero.gpx", mode: .continuous, spacingMeters: 2000, maxSpeed: 10),
        Case(track: "tracks/genivi_20100403_Z205_Switzerland_short.nmea", mode: .regions, spacingMeters: 500, maxSpeed: 45, timeRules: true),
    ]

    @Test(arguments: cases)
    func theLiveDaemonDecidesExactlyWhatReplayDecides(_ c: Case) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let track = try TrackReader.read(path: TestSupport.fixture(c.track).path).fixes.sorted { $0.time < $1.time }
        var profile = Self.evaluationProfile(mode: c.mode, maxSpeed: c.maxSpeed)
        let fences = PowerTracks.fences(along: track, spacingMeters: c.spacingMeters, radiusMeters: c.spacingMeters / 4)
        let extra = c.timeRules ? "defaults: {events: [enter, exit, dwell], dwell: {after: 30s, every: 60s}, approach: [1km, 300m]}" : ""
        let path = try Self.writeProfile(profile, fences: fences, in: dir, extra: extra)
        profile.fences = fences.enumerated().map { Fence(id: "f\($0.offset)", shape: $0.element) }
        if c.timeRules {
            for i in profile.fences.indices {
                profile.fences[i].events = [.enter, .exit, .dwell]
                profile.fences[i].dwell = .seconds(30)
                profile.fences[i].dwellEvery = .seconds(60)
                profile.fences[i].approach = ApproachSettings(bandsMeters: [1000, 300])
            }
        }

        let replay = try ReplayRun.evaluate(profile: profile, fixes: track, options: ReplayRun.Options())
        if c.timeRules { #expect(replay.events.contains { $0.kind == .approach }) }
        let live = try Self.runLive(profilePath: path, profile: profile, track: track, dir: dir)
        let replayActions = replay.actions.map(\.action.text)
        #expect(!replay.events.isEmpty)
        #expect(live.events.map(\.id) == replay.events.map(\.id))
        #expect(live.events.map(\.time) == replay.events.map(\.time))
        #expect(live.actions == replayActions)
        // Every switch of the receiver is in the database, at its time, with its reason.
        let replaySwitches = replay.actions.compactMap { timed -> String? in
            switch timed.action {
            case let .gnssOn(reason): "\(timed.time.rfc3339) on \(reason.text)"
            case let .gnssOff(reason): "\(timed.time.rfc3339) off \(reason.text)"
            default: nil
            }
        }
        #expect(!replaySwitches.isEmpty)
        #expect(live.stored.map { "\($0.time.rfc3339) \($0.on ? "on" : "off") \($0.reason)" } == replaySwitches)
        if c.mode == .continuous {
            #expect(try #require(replay.source).receiver.held > 0, "the screen held no jump")
        }
    }

    /// Sleeps of up to 30 min (the default `max_sleep`) with the watch off: gpsd would drop the
    /// idle client after 15 min, so the watch's state is sent again every 10 min while it is
    /// off, and never while it is on.
    @Test func aLongSleepWithTheWatchOffKeepsTheGpsdConnection() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/gpxpy_cerknicko-jezero.gpx").path).fixes.sorted { $0.time < $1.time }
        var profile = Self.evaluationProfile(maxSpeed: 10)
        profile.policy.maxSleep = .seconds(1800)
        // One fence 100 km away: every sleep is `max_sleep` long.
        let far = Geodesy.destination(from: track[0].coordinate, bearingDegrees: 90, distanceMeters: 100_000)
        let fences: [FenceShape] = [.circle(center: far, radiusMeters: 500)]
        let path = try Self.writeProfile(profile, fences: fences, in: dir)
        profile.fences = [Fence(id: "f0", shape: fences[0])]
        let live = try Self.runLive(profilePath: path, profile: profile, track: track, dir: dir)
        let log = live.watchLog
        #expect(log.filter { $0.what == "keepalive" }.count >= 2, "\(log)")
        var watching = false
        for (previous, next) in zip(log, log.dropFirst()) {
            if previous.what == "on" { watching = true }
            if previous.what == "off" { watching = false }
            #expect(!(watching && next.what == "keepalive"), "a keepalive while watching at \(next.time.rfc3339)")
            if !watching {
                #expect(next.time - previous.time <= .seconds(601), "off from \(previous.time.rfc3339) to \(next.time.rfc3339) without a word to gpsd")
            }
        }
    }

    /// A system clock years off the receiver's (the recording is from 2010): the switches
    /// the daemon stored before its first fix move onto the receiver's time with it, so the
    /// receiver log holds one time base and equals replay's, and the events are replay's.
    @Test func theReceiverLogIsOnTheReceiversTimeWhenTheSystemClockIsOff() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/genivi_20100403_Z205_Switzerland_short.nmea").path).fixes.sorted { $0.time < $1.time }
        var profile = Self.evaluationProfile()
        let fences = PowerTracks.fences(along: track, spacingMeters: 500, radiusMeters: 125)
        let path = try Self.writeProfile(profile, fences: fences, in: dir)
        profile.fences = fences.enumerated().map { Fence(id: "f\($0.offset)", shape: $0.element) }
        let replay = try ReplayRun.evaluate(profile: profile, fixes: track, options: ReplayRun.Options())
        for error in [Duration.seconds(3 * 365 * 86_400), .seconds(-86_400)] {
            let live = try Self.runLive(profilePath: path, profile: profile, track: track, dir: dir, systemClockError: error)
            #expect(live.events.map(\.id) == replay.events.map(\.id))
            let switches = replay.actions.compactMap { timed -> String? in
                switch timed.action {
                case let .gnssOn(reason): "\(timed.time.rfc3339) on \(reason.text)"
                case let .gnssOff(reason): "\(timed.time.rfc3339) off \(reason.text)"
                default: nil
                }
            }
            let stored = live.stored.map { "\($0.time.rfc3339) \($0.on ? "on" : "off") \($0.reason)" }
            #expect(stored.count == switches.count)
            #expect(stored.first == switches.first)
            #expect(stored == switches, "first difference: \(zip(stored, switches).first { $0 != $1 }.map { "\($0) vs \($1)" } ?? "-")")
            let outside = live.stored.filter { $0.time < track[0].time || $0.time > track[track.count - 1].time }
            #expect(outside.isEmpty, "\(outside.count) switches outside the recording, the first at \(outside.first.map(\.time.rfc3339) ?? "")")
        }
    }

    /// `geomon run` reads the device's battery (a sysfs-like directory here) into its MQTT
    /// messages, and publishes no fix worse than `min_accuracy`.
    @Test func theLiveDaemonsMessagesCarryTheBatteryAndOnlyUsableFixes() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("power/BAT0/type", "Battery\n")
        _ = try dir.write("power/BAT0/capacity", "83\n")
        _ = try dir.write("power/BAT0/status", "Charging\n")
        var track = try TrackReader.read(path: TestSupport.fixture("tracks/genivi_20100403_Z205_Switzerland_short.nmea").path).fixes.sorted { $0.time < $1.time }
        // Every tenth fix as a receiver reports a poor one.
        for k in stride(from: 5, to: track.count, by: 10) { track[k].horizontalAccuracyMeters = 1115 }
        var profile = Self.evaluationProfile(mode: .continuous)
        let fences = PowerTracks.fences(along: track, spacingMeters: 500, radiusMeters: 125)
        let path = try Self.writeProfile(profile, fences: fences, in: dir, extra: """
            publish:
              mqtt: {host: 127.0.0.1, port: \(Self.closedPort()), topic: owntracks/geomon/van, tracker_id: v1, locations: all}
            """)
        profile.fences = fences.enumerated().map { Fence(id: "f\($0.offset)", shape: $0.element) }
        let live = try Self.runLive(profilePath: path, profile: profile, track: track, dir: dir) { $0.powerSupplyDirectory = dir.path("power") }
        let messages = live.outbox.filter { $0.kind != .waypoints }
        #expect(messages.count > 100)
        #expect(messages.allSatisfy { $0.payload.contains(#""batt":83,"bs":2"#) })
        #expect(!messages.contains { $0.payload.contains(#""acc":1115"#) })
        #expect(messages.contains { $0.kind == .transition })
    }

    /// A daemon on a manual clock whose gpsd endpoint refuses connections.
    static func daemon(profileYAML: String, in dir: TemporaryDirectory, lines: Lines, clock: ManualClock, gnss: (any GNSSFeed)? = nil) throws -> LiveDaemon {
        let path = try dir.write("p.yaml", profileYAML)
        var options = RunOptions(profilePath: path)
        options.databasePath = dir.path("d.db")
        options.logLevel = .debug
        return try LiveDaemon(options: options, log: Log(level: .debug, journald: false, sink: { lines.append($0) }), clock: clock, gnss: gnss)
    }

    static func closedPort() -> Int {
        // Bind and close: nothing listens there afterwards.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        close(fd)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func gpsdReconnectBacksOffFrom250MillisecondsToFourSeconds() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let lines = Lines()
        let clock = ManualClock()
        let port = Self.closedPort()
        let daemon = try Self.daemon(profileYAML: """
            version: 1
            name: reconnect
            mode: regions
            sources:
              gnss: {plugin: gpsd, host: 127.0.0.1, port: \(port)}
            fences:
              - {id: a, circle: {lat: 47, lon: 8, radius: 100m}}
            """, in: dir, lines: lines, clock: clock)
        try daemon.begin()
        try daemon.runUntilIdle()
        #expect(daemon.gpsdAttempts == 1)
        #expect(lines.count("gpsd unavailable, retrying") == 1)
        // Attempts at +250 ms, +500 ms, +1 s, +2 s, +4 s, +4 s after each failure.
        var attempts = 1
        for delay in [250, 500, 1000, 2000, 4000, 4000] {
            clock.advance(by: .milliseconds(delay - 1))
            try daemon.runUntilIdle()
            #expect(daemon.gpsdAttempts == attempts, "early at \(delay) ms")
            clock.advance(by: .milliseconds(1))
            try daemon.runUntilIdle()
            attempts += 1
            #expect(daemon.gpsdAttempts == attempts, "not at \(delay) ms")
        }
        // One warning for the outage, not one per attempt.
        #expect(lines.count("gpsd unavailable, retrying") == 1)
        _ = daemon.finish(code: 0)
    }

    /// A profile whose `enter` hook fails on its first run and succeeds on the second, with a
    /// heartbeat every minute; the receiver model walks into the fence.
    static func hookProfile(dir: TemporaryDirectory, heartbeat: String) throws -> String {
        _ = try dir.write("flaky.sh", """
            #!/bin/sh
            if [ -e "\(dir.path("tried"))" ]; then echo "$GEOMON_EVENT_ID" >> "\(dir.path("delivered"))"; exit 0; fi
            touch "\(dir.path("tried"))"; echo "not yet" >&2; exit 3
            """, mode: 0o755)
        _ = try dir.write("beat.sh", "#!/bin/sh\ncat >> \"\(dir.path("beats"))\"\necho >> \"\(dir.path("beats"))\"\n", mode: 0o755)
        return """
            version: 1
            name: hooks
            mode: regions
            sources:
              gnss: {plugin: gpsd}
            policy: {max_speed: 45m/s, receiver: {ttff_hot: 2s}}
            hooks:
              enter: [{exec: ["./flaky.sh"], timeout: 5s}]
              \(heartbeat)
              retry: {attempts: 3, backoff: 10s, max_backoff: 10s}
            fences:
              - {id: home, circle: {lat: 0, lon: 0, radius: 100m}}
            """
    }

    /// A daemon on the manual clock over `walkIn()` (the receiver's clock is the recording's
    /// time going on at the monotonic rate), begun.
    static func walking(_ dir: TemporaryDirectory, profileYAML: String) throws -> (daemon: LiveDaemon, lines: Lines, clock: ManualClock, feed: ModelFeed) {
        let lines = Lines()
        let track = Self.walkIn()
        let clock = ManualClock(wall: track[0].time)
        let feed = ModelFeed(track: track, settings: ReceiverSettings())
        let daemon = try Self.daemon(profileYAML: profileYAML, in: dir, lines: lines, clock: clock, gnss: feed)
        let startMicros = clock.monotonicMicroseconds
        feed.now = { track[0].time + .microseconds(clock.monotonicMicroseconds - startMicros) }
        try daemon.begin()
        return (daemon, lines, clock, feed)
    }

    static func walkIn() -> [Fix] {
        (0...60).map { s in
            Fix(time: UTCTime(millisecondsSince1970: 1_800_000_000_000 + Int64(s) * 1000),
                coordinate: Coordinate(latitude: 0, longitude: (300 - Double(s) * 5) / 111_195.08), horizontalAccuracyMeters: 5)
        }
    }

    /// Steps the daemon through `seconds` of manual time, handing over the model's fixes.
    static func drive(_ daemon: LiveDaemon, _ feed: ModelFeed, _ clock: ManualClock, seconds: Double) throws {
        let stop = clock.monotonicMicroseconds + Int64(seconds * 1_000_000)
        try daemon.runUntilIdle()
        while true {
            let fixAt = feed.nextFixTime.map { daemon.monotonic(at: $0) }
            guard let target = [fixAt, daemon.nextWake].compactMap({ $0 }).min(), target <= stop else { break }
            let now = clock.monotonicMicroseconds
            if target > now { clock.advance(by: .microseconds(target - now)) }
            if let fixAt, fixAt <= clock.monotonicMicroseconds { feed.poke() }
            try daemon.runUntilIdle()
        }
        let now = clock.monotonicMicroseconds
        if stop > now { clock.advance(by: .microseconds(stop - now)) }
        try daemon.runUntilIdle()
    }

    /// The walk-in with the flaky hook, driven up to the enter's first attempt, whenever the
    /// policy's fixes decide it: the hook has run once and failed (exit 3).
    static func failedFirstAttempt(_ dir: TemporaryDirectory) throws -> (daemon: LiveDaemon, lines: Lines, clock: ManualClock, feed: ModelFeed) {
        let (daemon, lines, clock, feed) = try Self.walking(dir, profileYAML: try Self.hookProfile(dir: dir, heartbeat: ""))
        var driven = 0.0
        while lines.count("hook failed, will retry") == 0, driven < 60 {
            try Self.drive(daemon, feed, clock, seconds: 0.5)
            daemon.waitForHooks(timeout: .seconds(10))
            driven += 0.5
        }
        return (daemon, lines, clock, feed)
    }

    @Test func aFailedDeliveryIsRetriedAtItsBackoffOnTheManualClock() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, lines, clock, feed) = try Self.failedFirstAttempt(dir)
        #expect(lines.count("hook failed, will retry") == 1)
        #expect(lines.all.contains { $0.contains("hook failed, will retry") && $0.contains("exit status 3") })
        // What the hook printed is in the log, with the stream it came on.
        #expect(lines.all.contains { $0.contains("hook output") && $0.contains("stderr") && $0.contains("not yet") })
        #expect(!FileManager.default.fileExists(atPath: dir.path("delivered")))
        // 10 s of backoff with equal jitter (5–10 s): nothing before 4.9 s, the retry by 10 s.
        try Self.drive(daemon, feed, clock, seconds: 4.9)
        #expect(daemon.hooksRunning == 0 && !FileManager.default.fileExists(atPath: dir.path("delivered")))
        try Self.drive(daemon, feed, clock, seconds: 5.2)
        daemon.waitForHooks(timeout: .seconds(10))
        #expect(lines.count("hook delivered") == 1)
        let delivered = try String(contentsOfFile: dir.path("delivered"), encoding: .utf8)
        #expect(delivered.split(separator: "\n").count == 1)
        _ = daemon.finish(code: 0)
    }

    /// A hook whose command the user fixes and reloads takes its waiting retry along: the
    /// retry runs the new command, with the new entry's settings, and is delivered.
    @Test func aFixedHookCommandTakesItsWaitingRetryAlong() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, lines, clock, feed) = try Self.failedFirstAttempt(dir)
        #expect(lines.count("hook failed, will retry") == 1)
        _ = try dir.write("fixed.sh", "#!/bin/sh\necho \"$GEOMON_EVENT_ID $FIXED\" >> \"\(dir.path("fixed"))\"\n", mode: 0o755)
        var yaml = try Self.hookProfile(dir: dir, heartbeat: "")
        yaml = yaml.replacingOccurrences(of: #"enter: [{exec: ["./flaky.sh"], timeout: 5s}]"#,
                                         with: #"enter: [{exec: ["./fixed.sh"], timeout: 5s, env: {FIXED: "yes"}}]"#)
        _ = try dir.write("p.yaml", yaml)
        daemon.requestReload()
        try daemon.runUntilIdle()
        #expect(lines.count("hook command changed; its deliveries not yet made follow it") == 1, "\(lines.all.suffix(5))")
        try Self.drive(daemon, feed, clock, seconds: 11)
        daemon.waitForHooks(timeout: .seconds(10))
        #expect(lines.count("hook delivered") == 1, "\(lines.all.filter { $0.contains("hook") })")
        let fixed = try String(contentsOfFile: dir.path("fixed"), encoding: .utf8)
        #expect(fixed.split(separator: "\n").count == 1 && fixed.hasSuffix(" yes\n"), "\(fixed)")
        _ = daemon.finish(code: 0)
    }

    /// Stopping commits first, while the services still run, and then stops them: a retry
    /// that came due is started before the hook service stops, which waits for it and records
    /// it; no hook starts after the service stopped (it would run unrecorded and again after a
    /// restart).
    @Test func aRetryDueAtShutdownRunsBeforeTheServicesStopAndIsRecorded() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, lines, clock, _) = try Self.failedFirstAttempt(dir)
        #expect(lines.count("hook failed, will retry") == 1)
        // The retry (10 s of backoff) comes due, and the daemon is stopped before its loop runs.
        clock.advance(by: .seconds(11))
        _ = daemon.finish(code: 0)
        #expect(lines.count("hook delivered") == 1, "\(lines.all.filter { $0.contains("hook") })")
        let store = try EventStore(path: dir.path("d.db"), readOnly: true)
        #expect(try store.deliveryQueue.deliveries(status: .running).isEmpty)
        #expect(try store.deliveryQueue.deliveries(status: .delivered).count == 1)
        // Nothing runs on after the stop.
        #expect(daemon.hooksRunning == 0)
        #expect(try String(contentsOfFile: dir.path("delivered"), encoding: .utf8).split(separator: "\n").count == 1)
    }

    @Test func heartbeatsRunOnTheManualClock() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let yaml = try Self.hookProfile(dir: dir, heartbeat: "heartbeat: {every: 1m, run: [{exec: [\"./beat.sh\"]}]}")
        let (daemon, lines, clock, feed) = try Self.walking(dir, profileYAML: yaml)
        // The first beat comes 5 s after the start, then one a minute.
        for minute in 1...3 {
            try Self.drive(daemon, feed, clock, seconds: 60)
            daemon.waitForHooks(timeout: .seconds(10))
            #expect(lines.count("heartbeat hook finished") == minute)
        }
        let beats = try String(contentsOfFile: dir.path("beats"), encoding: .utf8).split(separator: "\n")
        #expect(beats.count == 3)
        // Each beat gets the daemon's status as JSON on stdin.
        let status = try JSONSerialization.jsonObject(with: Data(beats[0].utf8)) as? [String: Any]
        #expect(status?["profile"] as? String == "hooks" && status?["running"] as? Bool == true)
        _ = daemon.finish(code: 0)
    }

    /// An event decided while another writer holds the database is held in memory, not lost
    /// and not acted on: the daemon goes on, retries, and commits it once when the lock goes.
    /// The lock is taken just before the fix that decides the enter, so the event's own commit
    /// is the first to fail (an undisturbed walk first, for the moment).
    @Test func anEventDecidedWhileTheDatabaseIsLockedIsCommittedOnceItIsFree() throws {
        let track = Self.walkIn()
        func walk(_ dir: TemporaryDirectory, lockFrom: Double?) throws -> (daemon: LiveDaemon, lines: Lines, clock: ManualClock, feed: ModelFeed, entered: Double?) {
            let lines = Lines()
            let clock = ManualClock(wall: track[0].time)
            let feed = ModelFeed(track: track, settings: ReceiverSettings())
            let daemon = try Self.daemon(profileYAML: try Self.hookProfile(dir: dir, heartbeat: ""), in: dir, lines: lines, clock: clock, gnss: feed)
            let startMicros = clock.monotonicMicroseconds
            feed.now = { track[0].time + .microseconds(clock.monotonicMicroseconds - startMicros) }
            try daemon.begin()
            if let lockFrom {
                try Self.drive(daemon, feed, clock, seconds: lockFrom)
                return (daemon, lines, clock, feed, nil)
            }
            var elapsed = 0.0
            while daemon.machine.engine.state(of: "home") != .inside, elapsed < 60 {
                try Self.drive(daemon, feed, clock, seconds: 0.25)
                elapsed += 0.25
            }
            return (daemon, lines, clock, feed, elapsed)
        }
        let dry = try TemporaryDirectory()
        defer { dry.remove() }
        let undisturbed = try walk(dry, lockFrom: nil)
        let entered = try #require(undisturbed.entered)
        _ = undisturbed.daemon.finish(code: 0)

        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, lines, clock, feed, _) = try walk(dir, lockFrom: entered - 0.5)
        #expect(daemon.machine.engine.state(of: "home") != .inside)
        let blocker = try Connection(path: dir.path("d.db"), busyTimeoutMilliseconds: 0)
        try blocker.execute("BEGIN IMMEDIATE")
        try Self.drive(daemon, feed, clock, seconds: 6)
        #expect(daemon.machine.engine.state(of: "home") == .inside)
        #expect(lines.count("cannot commit to the database") == 1)
        #expect(try blocker.scalarInt("SELECT count(*) FROM events") == 0)
        #expect(!FileManager.default.fileExists(atPath: dir.path("tried")), "a hook ran on an event not committed")
        try blocker.execute("COMMIT")
        try Self.drive(daemon, feed, clock, seconds: 10)
        #expect(lines.count("database commits resumed") == 1)
        #expect(try blocker.scalarInt("SELECT count(*) FROM events WHERE kind = 'enter'") == 1)
        #expect(daemon.finish(code: 0) == 0)
    }

    /// A beat still running when the profile is reloaded is not started again beside itself,
    /// the schedule goes on, and stopping ends it: no beat outlives the daemon.
    @Test func aLongBeatIsNotDoubledByAReloadAndEndsWithTheDaemon() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("slow-beat.sh", "#!/bin/sh\necho $$ >> \"\(dir.path("pids"))\"\nexec sleep 60\n", mode: 0o755)
        let yaml = try Self.hookProfile(dir: dir, heartbeat: "heartbeat: {every: 20s, run: [{exec: [\"./slow-beat.sh\"], timeout: 5m}]}")
        _ = try dir.write("p.yaml", yaml)
        let (daemon, lines, clock, feed) = try Self.walking(dir, profileYAML: yaml)
        try Self.drive(daemon, feed, clock, seconds: 10)
        #expect(waitUntil(within: .seconds(10)) { (try? String(contentsOfFile: dir.path("pids"), encoding: .utf8))?.hasSuffix("\n") == true })
        daemon.requestReload()
        try daemon.runUntilIdle()
        #expect(lines.count("profile reloaded") == 1)
        // Two more periods: the first beat still runs, so none starts beside it.
        try Self.drive(daemon, feed, clock, seconds: 45)
        let pids = try String(contentsOfFile: dir.path("pids"), encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        #expect(pids.count == 1, "\(pids)")
        _ = daemon.finish(code: 0)
        for pid in pids { #expect(kill(pid, 0) != 0, "the beat \(pid) outlived the daemon") }
    }

    /// A reload that changes the motion sensor or the coarse command stops the one running and
    /// starts the new one; one that removes the sensor stops it: the policy never acts on a
    /// source the profile no longer names (the old ones ran on, and the new machine, which
    /// starts with the coarse source off, never switched them off).
    @Test func aReloadReplacesTheSourcesTheProfileChanged() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        for name in ["motion-a", "motion-b", "coarse-a", "coarse-b"] {
            let word = name.hasPrefix("motion-a") ? "echo '{\"moving\": true}'\n" : ""
            _ = try dir.write("\(name).sh", "#!/bin/sh\necho $$ > \"\(dir.path(name + ".pid"))\"\n\(word)exec sleep 60\n", mode: 0o755)
        }
        func profile(motion: String?, coarse: String) -> String {
            """
            version: 1
            name: sources
            mode: significant-change
            sources:
              gnss: {plugin: gpsd}
              coarse: {exec: ["./\(coarse).sh"], interval: 60s, accuracy: 500m}
            \(motion.map { "  motion: {plugin: command, exec: [\"./\($0).sh\"]}" } ?? "")
            fences:
              - {id: home, circle: {lat: 0, lon: 0, radius: 100m}}
            """
        }
        func pid(_ name: String) -> Int32? {
            (try? String(contentsOfFile: dir.path(name + ".pid"), encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        func alive(_ name: String) -> Bool { pid(name).map { kill($0, 0) == 0 } ?? false }
        let (daemon, lines, clock, feed) = try Self.walking(dir, profileYAML: profile(motion: "motion-a", coarse: "coarse-a"))
        #expect(waitUntil(within: .seconds(10)) {
            (try? Self.drive(daemon, feed, clock, seconds: 0.5)) != nil && alive("motion-a") && alive("coarse-a") && daemon.machine.motion == .moving
        }, "\(lines.all.suffix(20))")

        _ = try dir.write("p.yaml", profile(motion: "motion-b", coarse: "coarse-b"))
        daemon.requestReload()
        try daemon.runUntilIdle()
        #expect(lines.count("profile reloaded") == 1)
        #expect(waitUntil(within: .seconds(10)) { (try? Self.drive(daemon, feed, clock, seconds: 0.5)) != nil && alive("motion-b") && alive("coarse-b") },
                "\(lines.all.suffix(20))")
        #expect(!alive("motion-a") && !alive("coarse-a"))
        // The new sensor has said nothing yet: the old one's word is gone with it.
        #expect(daemon.machine.motion == nil)

        // The coarse command the profile keeps is started again by the new machine.
        let before = pid("coarse-b")
        _ = try dir.write("p.yaml", profile(motion: nil, coarse: "coarse-b"))
        daemon.requestReload()
        try Self.drive(daemon, feed, clock, seconds: 1)
        #expect(lines.count("profile reloaded") == 2)
        #expect(!alive("motion-b"))
        #expect(waitUntil(within: .seconds(10)) { (try? Self.drive(daemon, feed, clock, seconds: 0.5)) != nil && pid("coarse-b") != before && alive("coarse-b") },
                "\(lines.all.suffix(20))")
        #expect(before.map { kill($0, 0) != 0 } == true)
        _ = daemon.finish(code: 0)
        #expect(!alive("coarse-b"))
    }

    /// A coarse command that prints lines geomon cannot read, over many reads: counted in the
    /// status, warned once for the program's run (one warning per read flooded the log).
    @Test func aCoarseCommandsBadLinesAreWarnedOnce() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("chatty.sh", "#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10; do echo \"debug $i\"; sleep 0.05; done\nexec sleep 60\n", mode: 0o755)
        let yaml = """
            version: 1
            name: chatty
            mode: significant-change
            sources:
              gnss: {plugin: gpsd}
              coarse: {exec: ["./chatty.sh"], interval: 60s, accuracy: 500m}
            fences:
              - {id: home, circle: {lat: 0, lon: 0, radius: 100m}}
            """
        let (daemon, lines, clock, feed) = try Self.walking(dir, profileYAML: yaml)
        #expect(waitUntil(within: .seconds(10)) {
            (try? Self.drive(daemon, feed, clock, seconds: 0.1)) != nil && (daemon.runtimeStatus.coarse?.malformedLines ?? 0) >= 10
        }, "\(lines.all.suffix(10))")
        #expect(lines.count("coarse source printed malformed lines") == 1)
        _ = daemon.finish(code: 0)
    }

    @Test func aReloadTakesTheNewProfileAndKeepsTheFenceStates() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (daemon, lines, clock, feed) = try Self.walking(dir, profileYAML: try Self.hookProfile(dir: dir, heartbeat: ""))
        try Self.drive(daemon, feed, clock, seconds: 60)
        #expect(daemon.machine.engine.state(of: "home") == .inside)
        // A second fence, and an invalid edit first: the invalid one is refused.
        _ = try dir.write("p.yaml", "version: 1\nname: hooks\nmode: nonsense\n")
        daemon.requestReload()
        try daemon.runUntilIdle()
        #expect(lines.count("reload failed; keeping the running profile") == 1)
        #expect(daemon.profile.fences.count == 1)
        var yaml = try Self.hookProfile(dir: dir, heartbeat: "")
        yaml += "\n  - {id: far, circle: {lat: 1, lon: 1, radius: 100m}}\n"
        _ = try dir.write("p.yaml", yaml)
        daemon.requestReload()
        try daemon.runUntilIdle()
        #expect(lines.count("profile reloaded") == 1)
        #expect(daemon.profile.fences.map(\.id) == ["home", "far"])
        #expect(daemon.machine.engine.state(of: "home") == .inside)
        _ = daemon.finish(code: 0)
    }
}
