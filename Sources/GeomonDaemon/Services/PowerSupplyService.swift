#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
public import GeomonSources

/// The power supply for `modes:` (`geomon run`): the kernel's power-supply class (or a
/// directory laid out like it, `--power-supply DIR`) read at start and whenever it may have
/// changed, each reading that differs from the last handed to the driver (`.supply`).
///
/// Active only while the profile has `modes:` (at start, and after each reload: a profile
/// that gains modes on SIGHUP is watched from then on, one that loses them closes the watch).
///
/// Nothing is polled on a timer (`nextWake` is nil): the service sleeps on the kernel's uevents
/// (`PowerSupplyWatch`), and its companion `files` on the directory's inotify watch — the
/// driver polls one descriptor per service, so the second descriptor has a service of its own.
/// Fuel gauges do not send a uevent for every percent, so the class is also read when the loop
/// is awake anyway — a fix was taken (`.took`) — at most once a `readInterval` of the driver's
/// clock (`readNow`).
public final class PowerSupplyService: EventSource, EffectSink {
    public let name = "power-supply"
    /// The class, or a directory laid out like it.
    public let directory: String
    private let log: Log
    private var watch: PowerSupplyWatch?
    /// The last reading handed to the driver.
    public private(set) var lastEmitted: PowerSupplyReading?
    /// When the class was last read (the driver's monotonic µs).
    private var readAt: Int64?

    /// `readNow` reads the class at most this often.
    public static let readInterval: Duration = .seconds(60)

    /// The companion polling the directory's inotify descriptor: list it with this service.
    public private(set) lazy var files = PowerSupplyFilesService(owner: self)

    /// The battery's capacity the machine last decided on, from the store (a restart): a
    /// gauge whose first read fails leaves it standing, as every failed read does.
    private let storedCapacity: Int?

    public init(directory: String = PowerSupply.defaultDirectory, log: Log, storedCapacity: Int? = nil) {
        self.directory = directory
        self.log = log
        self.storedCapacity = storedCapacity
    }

    public var pollRequest: PollRequest? {
        watch?.ueventDescriptor.map { PollRequest(fd: $0, events: Int16(POLLIN)) }
    }

    /// The directory's inotify descriptor (polled by `files`).
    var directoryDescriptor: Int32? { watch?.directoryDescriptor }

    public func start(_ driver: DriverContext) throws {
        activate(!driver.profile.modes.isEmpty, driver, trigger: "start")
    }

    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        activate(!profile.modes.isEmpty, driver, trigger: "reload")
    }

    /// Opens the watch and reads the class when the profile has modes; closes it otherwise.
    private func activate(_ active: Bool, _ driver: DriverContext, trigger: String) {
        guard active else {
            watch = nil
            lastEmitted = nil
            readAt = nil
            return
        }
        if watch == nil { openWatch() }
        refresh(driver, trigger: trigger)
    }

    private func openWatch() {
        do {
            let watch = try PowerSupplyWatch(directory: directory)
            if let failure = watch.ueventFailure {
                log.warning("power-supply uevents unavailable: \(failure); changes seen only through inotify", ["supply.directory": directory])
            }
            if let failure = watch.directoryFailure {
                // On the kernel's class inotify says nothing anyway: the uevents speak.
                log.debug("power-supply directory not watched through inotify", ["supply.directory": directory, "error": failure])
            }
            self.watch = watch
        } catch {
            log.warning("power-supply changes unwatched: \(error.description); the class is read at start and at most once a minute while fixes are taken",
                        ["supply.directory": directory])
        }
    }

    public func stop(_ driver: DriverContext) {
        watch = nil
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        guard revents != 0, let watch, let fd = watch.ueventDescriptor else { return }
        if watch.drain(fd: fd) { refresh(driver, trigger: "uevent") }
    }

    /// The inotify descriptor was readable (`files`).
    func directoryReady(_ driver: DriverContext) {
        guard let watch, let fd = watch.directoryDescriptor else { return }
        if watch.drain(fd: fd) { refresh(driver, trigger: "inotify") }
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        // A fix was taken: the loop is awake anyway.
        if case .took = effect { readNow(driver) }
    }

    /// Reads the class if it was not read for `readInterval` of the driver's clock (gauges that
    /// send no uevent for a percent's change are caught up with this way).
    public func readNow(_ driver: DriverContext) {
        guard !driver.profile.modes.isEmpty else { return }
        if let readAt, driver.monotonic - readAt < Self.readInterval.wholeMicroseconds { return }
        refresh(driver, trigger: "periodic")
    }

    /// Reads the class; hands the reading over when it differs from the last one handed over.
    private func refresh(_ driver: DriverContext, trigger: String) {
        readAt = driver.monotonic
        let reading = PowerSupply.reading(in: directory, lastCapacity: lastEmitted.map(\.capacity) ?? storedCapacity)
        guard reading != lastEmitted else { return }
        lastEmitted = reading
        // The driver logs the reading it decides on ("power supply", at info).
        log.debug("power supply read", ["supply.trigger": trigger, "supply.directory": directory])
        driver.emit(.supply(reading))
    }
}

/// `PowerSupplyService`'s second descriptor: the inotify watch on the directory (a directory
/// laid out like the class on an ordinary file system; sysfs makes no inotify events). Listed
/// right after its owner; it has no state of its own.
public final class PowerSupplyFilesService: EventSource {
    public let name = "power-supply-files"
    private weak var owner: PowerSupplyService?

    init(owner: PowerSupplyService) {
        self.owner = owner
    }

    public var pollRequest: PollRequest? {
        owner?.directoryDescriptor.map { PollRequest(fd: $0, events: Int16(POLLIN)) }
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        guard revents != 0 else { return }
        owner?.directoryReady(driver)
    }
}
