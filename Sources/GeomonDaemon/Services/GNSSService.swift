#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonStore
public import GeomonSources
import GeomonFormat
import GeomonHooks

/// The GNSS receiver through gpsd (`GNSSFeed`): connects (and reconnects with backoff),
/// switches the receiver as the power policy says with the profile's method
/// (`sources.gnss.power`), hands the driver each fix, and takes an epoch whose accuracy gpsd
/// has not reported after `GPSDSource.epochBudget`.
///
/// With `watch` the receiver is "off" when gpsd's watch is off. Every other method switches
/// the receiver itself and keeps the watch open, so the receiver's own reports prove the
/// switch: reports that go on `offGrace` after it was switched off mean the method has no
/// effect on this receiver (logged once; the receiver counts as on, `measuredOn(at:)`).
///
/// The switches that take time (the `command` method's programs, ModemManager's calls) are
/// performed off the loop by `ReceiverSwitchService` (`switcher`): the loop goes on while one
/// runs, and the grace for "off is off" counts from the moment the switch-off finished.
public final class GNSSService: EventSource, EffectSink {
    public let name = "gnss"
    public let feed: any GNSSFeed
    private let power: GNSSPowerMethod
    /// The method's switch, one for the daemon's life (`modemmanager` remembers the GNSS
    /// sources it cleared, to restore them on).
    private let powerSwitch: ReceiverPowerSwitch
    private let log: Log
    private var reconnectAt: Int64?
    /// Whether the current connection has been announced at `notice`: at once when it is the
    /// first since a connection that delivered data, else once it delivers data itself. A gpsd
    /// that accepts and closes at once (a broken socket activation, a wrong port behind a
    /// proxy) so logs one warning, not a pair of lines every backoff.
    private var announced = false
    private var epochAt: Int64?
    /// The epoch `epochAt` waits for (a newer one held starts the budget again).
    private var epochHeld: UTCTime?
    /// When the watch's state is next sent again while it is off (`unwatchedKeepalive`).
    private var keepaliveAt: Int64?
    /// A switch on that did not reach the receiver — gpsd had named no device yet, or was not
    /// there (restarting) — sent again once gpsd names one (after a reconnection, the one it
    /// named before): a receiver a stop command left stopped would never report otherwise.
    private var pendingOnSwitch = false
    /// The switch last written through gpsd (`?DEVICE`) and when (monotonic µs): gpsd answers
    /// at once, so an error within `switchAnswerWindow` of it means it did not reach the
    /// receiver; a later one is about something else.
    private var switchSentThroughGpsd: (on: Bool, at: Int64)?
    private static let switchAnswerWindow: Int64 = 5_000_000
    /// gpsd drops a client that neither watches nor has sent a command for 15 minutes
    /// (`COMMAND_TIMEOUT` in gpsd.c, logged "timed out on command wait"). While the watch is off
    /// (the `watch` method's receiver off, for sleeps of up to `max_sleep`: 30 min by default)
    /// its state is sent again this often, so the connection is kept, not dropped and reopened.
    static let unwatchedKeepalive: Duration = .seconds(600)
    /// Connection attempts (the first one included).
    public private(set) var attempts = 0
    /// How long a receiver may go on reporting after it was switched off (what it had
    /// buffered, gpsd's latency) before the switch is taken to have had no effect.
    public static let offGrace: Duration = .seconds(3)
    /// While the receiver is supposed off, reports closer together than this count as
    /// continuous tracking in `measuredOn(at:)`.
    static let trackingGap: Int64 = 2_000_000
    /// The longest shutdown waits for the receiver's last switch (a switch program's 10 s
    /// timeout and a little; a modem that does not answer is left to its own 25 s).
    static let shutdownSwitchTimeout: Duration = .seconds(12)
    /// The policy has the receiver off (the switch asked for, whether or not it is done yet).
    private var switchedOff = false
    /// The receiver is off since this `.driver` instant (the switch done); nil while on or
    /// while the switch is under way.
    private var offSince: Int64?
    /// The switches performed off the loop (`command`, `modemmanager`); nil for the methods
    /// switched at once. The assembly lists it among the services, before this one.
    public let switcher: ReceiverSwitchService?
    private var lastSwitchWasOff = false
    /// The method was seen to have no effect (reports went on while off).
    public private(set) var ineffective = false
    /// The on-time of intervals that ended, and since when the receiver is on (the switch to on
    /// done; nil while it is off): see `measuredOn(at:)`.
    private var closedOn: Duration = .zero
    private var onSince: Int64?
    private var lastReport: Int64?
    private var statusMeasuredOn: Duration = .zero

    /// The time the receiver drew current so far (docs/power.md, "The measured on-time"):
    /// from each switch to on until the switch to off — the silence before its first fix and
    /// the gaps between its reports included — and, while it is supposed off, the time it
    /// still reports (each report counting the gap since the one before, up to `trackingGap`;
    /// one second for a lone report): a switch without effect counts as on.
    public func measuredOn(at now: Int64) -> Duration {
        closedOn + (onSince.map { .microseconds(max(0, now - $0)) } ?? .zero)
    }

    /// The receiver is on from `now` (the switch done).
    private func switchedOn(at now: Int64) {
        if onSince == nil { onSince = now }
    }

    /// The receiver is off from `now` (the switch done).
    private func switchedOffDone(at now: Int64) {
        if let since = onSince { closedOn += .microseconds(max(0, now - since)) }
        onSince = nil
    }

    /// - Parameter directory: the profile's directory (the `command` programs' working directory).
    /// - Parameter completions: the loop's wake when a switch program finished.
    public init(feed: any GNSSFeed, device: String?, power: GNSSPowerMethod = .watch, directory: String = "/", completions: CompletionService, log: Log) {
        self.feed = feed
        self.power = power
        powerSwitch = ReceiverPowerSwitch(method: power, device: device, directory: directory)
        self.log = log
        switcher = ReceiverSwitchService(method: power, device: device, directory: directory, completions: completions)
        switcher?.onFinished = { [unowned self] on, outcome, idle, driver in
            switchFinished(on: on, outcome, idle: idle, driver)
        }
    }

    public var pollRequest: PollRequest? {
        feed.fileDescriptor.map { PollRequest(fd: $0, events: Int16(POLLIN)) }
    }

    public var nextWake: Int64? {
        [reconnectAt, epochAt, keepaliveAt].compactMap { $0 }.min()
    }

    public func start(_ driver: DriverContext) throws {
        connect(driver)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        let now = driver.monotonic
        if let at = reconnectAt, at <= now {
            reconnectAt = nil
            connect(driver)
        }
        if let at = epochAt, at <= now {
            epochAt = nil
            epochHeld = nil
            handle(feed.flushPendingFix(), driver)
        }
        if let at = keepaliveAt, at <= now {
            keepaliveAt = nil
            if case .connected = feed.state, !feed.watchEnabled {
                do {
                    try feed.keepAlive()
                    scheduleKeepalive(driver)
                } catch {
                    log.warning("cannot send the gpsd watch", ["error": error.message])
                    handle(feed.disconnect(reason: error.message), driver)
                }
            }
        }
        if revents != 0 {
            handle(feed.readAvailable(), driver)
            switchOnOnceNamed()
            // An epoch still waiting for its accuracy or the receiver's velocity: taken as merged
            // so far after the budget, which runs from when that epoch was first held.
            if let held = feed.pendingFixTime {
                if held != epochHeld {
                    epochHeld = held
                    epochAt = driver.monotonic(after: GPSDSource.epochBudget)
                }
            } else {
                epochHeld = nil
                epochAt = nil
            }
        }
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        guard case let .power(action) = effect else { return }
        switch action {
        case .gnssOn:
            offSince = nil
            switchedOff = false
            switchReceiver(on: true, driver)
            setWatch(true, driver)
            switchedOn(at: driver.monotonic)
        case .gnssOff:
            if power.switchesReceiver {
                // Already off (a still sensor taking over a sleep): the receiver is left alone.
                guard !switchedOff else { break }
                switchedOff = true
                if switchReceiver(on: false, driver) {
                    offSince = driver.monotonic
                    switchedOffDone(at: driver.monotonic)
                }
            } else {
                setWatch(false, driver)
                switchedOffDone(at: driver.monotonic)
            }
        case .wakeAt, .coarseOn, .coarseOff: break
        }
        updateStatus(driver)
    }

    public func stop(_ driver: DriverContext) {
        // The receiver is left as the daemon found it at start: on (after any switch under way,
        // at once: the loop is ending).
        if let switcher {
            // Bounded: a modem that hangs must not hold the shutdown past systemd's stop timeout.
            if switchedOff {
                if let outcome = switcher.finalSwitch(on: true, timeout: Self.shutdownSwitchTimeout, driver) {
                    report(outcome, on: true)
                } else {
                    log.warning("the receiver switch on did not finish at shutdown", ["power.method": power.name, "waited_s": "\(Self.shutdownSwitchTimeout.components.seconds)"])
                }
            } else if !switcher.waitUntilIdle(timeout: Self.shutdownSwitchTimeout, driver) {
                log.warning("a receiver switch is still under way at shutdown", ["power.method": power.name])
            }
        } else if switchedOff {
            report(powerSwitch.set(on: true, feed: feed), on: true)
        }
        try? feed.watch(enabled: false, device: nil)
        _ = feed.disconnect(reason: "shutting down")
    }

    /// The method's switch: bytes to the receiver through gpsd at once, or the switch handed
    /// to `switcher` (a program, ModemManager). Whether the switch is done now (a switch that
    /// failed is not: fixes after it say nothing about the method's effect).
    @discardableResult
    private func switchReceiver(on: Bool, _ driver: DriverContext) -> Bool {
        if let switcher {
            switcher.submit(on: on)
            return false
        }
        let outcome = powerSwitch.set(on: on, feed: feed)
        // ubx/mtk before gpsd named any device, or while gpsd is away: the switch on follows
        // once it names one (its DEVICES answer to the watch), for a receiver left stopped that
        // would never report.
        pendingOnSwitch = on && power.switchesReceiver && (outcome.isFailed || (outcome == .nothing && powerSwitch.devicePath(feed) == nil))
        report(outcome, on: on)
        return !outcome.isFailed
    }

    /// The switch on that waited for gpsd to name the device (or to be there again), once it
    /// does: tried once more.
    private func switchOnOnceNamed() {
        guard pendingOnSwitch, !switchedOff, feed.state == .connected, powerSwitch.devicePath(feed) != nil else { return }
        pendingOnSwitch = false
        report(powerSwitch.set(on: true, feed: feed), on: true)
    }

    private func report(_ outcome: ReceiverPowerSwitch.Outcome, on: Bool) {
        let what = on ? "on" : "off"
        switch outcome {
        case .nothing:
            break
        case .switched:
            if switcher == nil, power.switchesReceiver { switchSentThroughGpsd = (on, SystemHostClock.monotonicMicroseconds()) }
            log.info("receiver switched \(what)", ["power.method": power.name])
        case let .failed(reason):
            log.warning("cannot switch the receiver \(what)", ["power.method": power.name, "error": reason])
        }
    }

    /// A switch performed off the loop finished: logged; the last off, done while the policy
    /// still has the receiver off, starts the grace.
    private func switchFinished(on: Bool, _ outcome: ReceiverPowerSwitch.Outcome, idle: Bool, _ driver: DriverContext) {
        report(outcome, on: on)
        lastSwitchWasOff = !on
        // A failed off leaves the receiver on: no grace, and its fixes count as on.
        if idle, lastSwitchWasOff, switchedOff, offSince == nil, !outcome.isFailed {
            offSince = driver.monotonic
            switchedOffDone(at: driver.monotonic)
        }
        updateStatus(driver)
    }

    /// A report from the receiver (a fix): its measured on-time, and whether "off" is off.
    private func received(_ fix: Fix, _ driver: DriverContext) {
        let now = driver.monotonic
        if onSince == nil {
            // Reporting while supposed off (the switch under way, or without effect).
            if let last = lastReport, now - last <= Self.trackingGap {
                closedOn += .microseconds(now - last)
            } else {
                closedOn += .seconds(1)
            }
        }
        lastReport = now
        // `geomon status` within a second of the truth while fixes come (a commit a second).
        if measuredOn(at: now) - statusMeasuredOn >= .seconds(1) { updateStatus(driver) }
        if let offSince, !ineffective, now - offSince > Self.offGrace.wholeMicroseconds {
            ineffective = true
            log.warning("the receiver still reports fixes after it was switched off: 'power: \(power.name)' has no effect on it; it counts as on (docs/power.md, \"Switching the receiver\")",
                        ["power.method": power.name, "off_for_s": String((now - offSince) / 1_000_000)])
            updateStatus(driver)
        }
    }

    private func setWatch(_ enabled: Bool, _ driver: DriverContext) {
        do {
            try feed.watch(enabled: enabled, device: powerSwitch.device)
            scheduleKeepalive(driver)
        } catch {
            log.warning("cannot change the gpsd watch", ["error": error.message])
            handle(feed.disconnect(reason: error.message), driver)
        }
    }

    /// The next keepalive while connected with the watch off; none otherwise.
    private func scheduleKeepalive(_ driver: DriverContext) {
        if case .connected = feed.state, !feed.watchEnabled {
            keepaliveAt = driver.monotonic(after: Self.unwatchedKeepalive)
        } else {
            keepaliveAt = nil
        }
    }

    private func connect(_ driver: DriverContext) {
        attempts += 1
        do {
            handle(try feed.connect(), driver)
        } catch {
            let first = feed.backoff.failures == 0
            let delay = feed.backoff.failed()
            reconnectAt = driver.monotonic(after: delay)
            if first {
                log.warning("gpsd unavailable, retrying", ["gpsd.endpoint": feed.endpoint, "error": error.message])
                updateStatus(driver)
            } else {
                log.debug("gpsd still unavailable", ["gpsd.endpoint": feed.endpoint, "retry_ms": "\(delay.wholeMilliseconds)"])
            }
        }
    }

    private func handle(_ events: [GPSDSource.Event], _ driver: DriverContext) {
        for event in events {
            switch event {
            case let .fix(fix):
                received(fix, driver)
                driver.emit(.fix(fix))
            case .stateChanged(.connected):
                announced = feed.backoff.failures == 0
                if announced {
                    log.notice("gpsd connected", ["gpsd.endpoint": feed.endpoint])
                } else {
                    log.info("gpsd accepted the connection; connected once it reports", ["gpsd.endpoint": feed.endpoint, "failures": "\(feed.backoff.failures)"])
                }
                scheduleKeepalive(driver)
                updateStatus(driver)
            case let .refused(message):
                // gpsd answers a `?DEVICE` write it cannot do with an error, then the device's
                // settings: the switch sent last did not reach the receiver.
                if let sent = switchSentThroughGpsd, SystemHostClock.monotonicMicroseconds() - sent.at <= Self.switchAnswerWindow {
                    log.warning("gpsd refused the receiver switch \(sent.on ? "on" : "off"); the receiver was not switched (gpsd writes only to a receiver it has identified from its reports: docs/sources.md)",
                                ["power.method": power.name, "error": message])
                } else {
                    log.warning("gpsd refused a command", ["gpsd.endpoint": feed.endpoint, "error": message])
                }
                switchSentThroughGpsd = nil
            case let .stateChanged(.disconnected(reason)):
                if feed.backoff.failures == 0 {
                    log.warning("gpsd disconnected", ["gpsd.endpoint": feed.endpoint, "reason": reason])
                } else {
                    log.info("gpsd disconnected again before reporting", ["gpsd.endpoint": feed.endpoint, "reason": reason])
                }
                announced = false
                epochAt = nil
                epochHeld = nil
                keepaliveAt = nil
                reconnectAt = driver.monotonic(after: feed.backoff.failed())
                updateStatus(driver)
            }
        }
        announceIfTalking()
    }

    /// A connection opened during a run of failures that has since delivered data (the
    /// source's backoff reset): gpsd is back.
    private func announceIfTalking() {
        guard !announced, feed.backoff.failures == 0, case .connected = feed.state else { return }
        announced = true
        log.notice("gpsd connected", ["gpsd.endpoint": feed.endpoint])
    }

    private func updateStatus(_ driver: DriverContext) {
        let state: String = switch feed.state {
        case .connected: "connected"
        case let .disconnected(reason): "disconnected: \(reason)"
        }
        let measured = measuredOn(at: driver.monotonic)
        statusMeasuredOn = measured
        var gnss = RuntimeStatus.Source(plugin: "gpsd", endpoint: feed.endpoint, state: state)
        gnss.power = RuntimeStatus.ReceiverPower(method: power.name, state: ineffective ? "always on (the switch has no effect)" : switchedOff ? "off" : "on",
                                                 measuredOnSeconds: measured.secondsValue)
        driver.updateStatus(\.gnss, gnss)
    }
}
