#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonStore
public import GeomonSources
import GeomonFormat

/// The motion sensor (`sources.motion`): an IIO accelerometer sampled at `sample`, or a
/// command printing `{"moving": true|false, "activity": …}` lines, turned into moving / still
/// by a `MotionDetector` and handed to the driver when that changes, with the activity the
/// source senses (the accelerometer's windows, `MotionDetector.activity`; the command's word). No word for `stale_after`
/// (the accelerometer unreadable, the command silent or gone) and the sensor counts as
/// absent: `.motion(nil)`, logged once, until it speaks again.
///
/// The accelerometer is not read while it says moving and the receiver is on and giving
/// fixes: GNSS watches then, and the sensor costs nothing extra (docs/power.md, "Wake on
/// motion"); it is looked at again `watchedFor` after the last fix, and read again once the
/// receiver is off or its fixes stop.
public final class MotionService: EventSource, EffectSink {
    public let name = "motion"
    public let settings: MotionSourceSettings
    private let log: Log
    private let command: CommandSource?
    private let accelerometer: IIOAccelerometer?
    private var detector: MotionDetector
    private var receiverOn = false
    /// When the machine last took a GNSS fix (the driver's monotonic µs).
    private var lastFix: Int64?
    /// The accelerometer rests: moving, with the receiver on and giving fixes.
    private var resting = false
    private static let watchedFor: Int64 = 5_000_000
    private var nextSample: Int64?
    private var restartAt: Int64?
    private var lastWord: Int64?
    private var stale = false
    /// The accelerometer's last read failed (warned once for the stretch).
    private var unreadable = false
    private var handedOver: Motion?
    /// Silence was handed over in this process (a machine restored from the store holds the
    /// stored motion until the source speaks, and silence must say so once).
    private var silenceHanded = false
    /// The command printed malformed lines since its last good one (warned once).
    private var malformedStretch = false
    private var sensedActivity: Activity?

    /// - Parameters:
    ///   - accelerometer: the device to read (`plugin: iio`), found or opened by the caller;
    ///     nil with `plugin: command`, or when none could be opened (the sensor is absent).
    public init(settings: MotionSourceSettings, accelerometer: IIOAccelerometer?, home: String?, log: Log) {
        self.settings = settings
        self.log = log
        self.accelerometer = accelerometer
        detector = MotionDetector(stillAfter: settings.stillAfter, window: settings.window,
                                  thresholdMetersPerSecondSquared: settings.thresholdMetersPerSecondSquared,
                                  footThresholdMetersPerSecondSquared: settings.footThresholdMetersPerSecondSquared)
        command = settings.plugin == .command
            ? CommandSource(arguments: settings.exec, restartInterval: settings.restartInterval, home: home, lines: .motion)
            : nil
    }

    public var pollRequest: PollRequest? {
        command?.fileDescriptor.map { PollRequest(fd: $0, events: Int16(POLLIN)) }
    }

    public var nextWake: Int64? {
        guard !resting else { return [nextSample, restartAt].compactMap { $0 }.min() }
        return [nextSample, restartAt, detector.deadline.map { $0.wholeMicroseconds }, staleAt].compactMap { $0 }.min()
    }

    /// GNSS watches: the sensor says moving, the receiver is on and its last fix is recent.
    private func watched(_ now: Int64) -> Bool {
        accelerometer != nil && receiverOn && detector.reported == .moving && (lastFix.map { now - $0 < Self.watchedFor } ?? false)
    }

    private var staleAt: Int64? {
        guard !stale, !resting, let lastWord else { return nil }
        return lastWord + settings.staleAfter.wholeMicroseconds
    }

    private var samplePeriod: Int64 { Int64((1_000_000 / max(settings.sampleHertz, 0.001)).rounded()) }

    public func start(_ driver: DriverContext) throws {
        lastWord = driver.monotonic
        updateStatus("unknown", driver)
        if command != nil {
            launch(driver)
        } else if accelerometer != nil {
            nextSample = driver.monotonic
            log.info("motion sensor: accelerometer", ["motion.device": accelerometer?.directory ?? "-", "motion.sample_hz": NumberText.short(settings.sampleHertz, 3)])
        }
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        let now = driver.monotonic
        if let at = restartAt, at <= now {
            restartAt = nil
            launch(driver)
        }
        if let command, revents != 0 {
            let before = command.malformedLines
            defer {
                // Once for each stretch of them (a line that parses ends it).
                if command.malformedLines > before, !malformedStretch {
                    malformedStretch = true
                    log.warning("motion command printed malformed lines", ["count": "\(command.malformedLines - before)", "error": command.lastError ?? "-"])
                }
            }
            for event in command.readAvailable() {
                switch event {
                case let .motion(word):
                    malformedStretch = false
                    heard(driver)
                    if let motion = word.motion { hand(detector.said(moving: motion == .moving, at: .microseconds(now)), driver) }
                    sensed(word.activity, driver)
                case .fix:
                    break
                case let .exited(status):
                    log.info("motion command exited", ["exit_status": "\(status)", "restart_s": NumberText.short(settings.restartInterval.secondsValue, 3)])
                    restartAt = driver.monotonic(after: settings.restartInterval)
                }
            }
        }
        if let at = nextSample, at <= now, let accelerometer {
            if watched(now), let lastFix {
                // Resting: GNSS watches; look again when its fixes may have stopped.
                resting = true
                lastWord = now
                nextSample = lastFix + Self.watchedFor
            } else {
                if resting {
                    // The rest counts as movement: `still` needs `still_after` anew.
                    resting = false
                    _ = detector.said(moving: true, at: .microseconds(now))
                }
                nextSample = now + samplePeriod
                do {
                    let magnitude = try accelerometer.magnitude()
                    heard(driver)
                    hand(detector.sample(magnitude: magnitude, at: .microseconds(now)), driver)
                    sensed(detector.activity, driver)
                } catch {
                    // Once a stretch of failed reads (the next good one ends it).
                    if !unreadable, !stale {
                        log.warning("motion sensor unreadable", ["motion.device": accelerometer.directory, "error": error.description])
                    }
                    unreadable = true
                }
            }
        }
        if !resting { hand(detector.tick(at: .microseconds(now)), driver) }
        if let at = staleAt, at <= now {
            stale = true
            detector.reset()
            log.warning("motion sensor silent: the policy goes on as without one until it speaks again",
                        ["motion.plugin": settings.plugin.rawValue, "stale_after_s": NumberText.short(settings.staleAfter.secondsValue, 3)])
            if handedOver != nil || !silenceHanded {
                handedOver = nil
                silenceHanded = true
                driver.emit(.motion(nil))
            }
            if sensedActivity != nil {
                sensedActivity = nil
                driver.emit(.activity(nil))
            }
            updateStatus("silent", driver)
        }
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        if case let .took(fix, _) = effect, fix.source == .gnss { lastFix = driver.monotonic }
        guard case let .power(action) = effect else { return }
        switch action {
        case .gnssOn:
            receiverOn = true
        case .gnssOff:
            receiverOn = false
            // GNSS stops watching: read the accelerometer again now.
            if resting { nextSample = driver.monotonic }
        default:
            break
        }
    }

    /// The new machine starts from the stored state: the policy has neither the source's word
    /// nor its activity (they are not stored), so both are handed over again (silence too).
    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        if let handedOver { driver.emit(.motion(handedOver)) } else if stale { driver.emit(.motion(nil)) }
        if let sensedActivity { driver.emit(.activity(sensedActivity)) }
    }

    public func stop(_ driver: DriverContext) {
        command?.stop()
    }

    private func heard(_ driver: DriverContext) {
        lastWord = driver.monotonic
        unreadable = false
        if stale {
            stale = false
            log.info("motion sensor speaks again", ["motion.plugin": settings.plugin.rawValue])
        }
    }

    private func hand(_ change: Motion?, _ driver: DriverContext) {
        guard let change, change != handedOver else { return }
        handedOver = change
        driver.emit(.motion(change))
        updateStatus(change.rawValue, driver)
    }

    /// The activity the source senses (a command's word, the accelerometer's window): handed
    /// over when it changes (the policy plans with its bounds; nil leaves the last in force).
    private func sensed(_ activity: Activity?, _ driver: DriverContext) {
        guard let activity, activity != sensedActivity else { return }
        sensedActivity = activity
        log.info("motion source senses an activity", ["activity": activity.rawValue])
        driver.emit(.activity(activity))
    }

    private func updateStatus(_ state: String, _ driver: DriverContext) {
        driver.updateStatus(\.motion, .init(plugin: settings.plugin.rawValue, state: state, since: state == "unknown" ? nil : driver.wall))
    }

    private func launch(_ driver: DriverContext) {
        guard let command else { return }
        do {
            try command.start()
            log.info("motion command started", ["motion.cmd": command.arguments.joined(separator: " ")])
        } catch {
            log.warning("motion command failed to start", ["error": error.description])
            restartAt = driver.monotonic(after: settings.restartInterval)
        }
    }
}
