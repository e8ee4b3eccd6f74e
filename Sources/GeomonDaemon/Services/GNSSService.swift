#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonStore
public import GeomonSources
import GeomonFormat

/// The GNSS receiver through gpsd (`GNSSFeed`): connects (and reconnects with backoff), turns
/// the watch on and off as the power policy switches the receiver, hands the driver each fix,
/// and takes an epoch whose accuracy gpsd has not reported after `GPSDSource.epochBudget`.
public final class GNSSService: Service {
    public let name = "gnss"
    public let feed: any GNSSFeed
    private let device: String?
    private let log: Log
    private var reconnectAt: Int64?
    private var epochAt: Int64?
    /// Connection attempts (the first one included).
    public private(set) var attempts = 0

    public init(feed: any GNSSFeed, device: String?, log: Log) {
        self.feed = feed
        self.device = device
        self.log = log
    }

    public var pollRequest: PollRequest? {
        feed.fileDescriptor.map { PollRequest(fd: $0, events: Int16(POLLIN)) }
    }

    public var nextWake: Int64? {
        switch (reconnectAt, epochAt) {
        case let (a?, b?): min(a, b)
        case let (a?, nil): a
        case let (nil, b?): b
        case (nil, nil): nil
        }
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
            handle(feed.flushPendingFix(), driver)
        }
        if revents != 0 {
            handle(feed.readAvailable(), driver)
            // An epoch whose accuracy gpsd has not sent yet: taken as it is after the budget.
            if feed.hasPendingFix {
                if epochAt == nil { epochAt = driver.monotonic(after: GPSDSource.epochBudget) }
            } else {
                epochAt = nil
            }
        }
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        guard case let .power(action) = effect else { return }
        switch action {
        case .gnssOn: setWatch(true, driver)
        case .gnssOff: setWatch(false, driver)
        case .wakeAt, .coarseOn, .coarseOff: break
        }
    }

    public func stop(_ driver: DriverContext) {
        try? feed.watch(enabled: false, device: nil)
        _ = feed.disconnect(reason: "shutting down")
    }

    private func setWatch(_ enabled: Bool, _ driver: DriverContext) {
        do {
            try feed.watch(enabled: enabled, device: device)
        } catch {
            log.warning("cannot change the gpsd watch", ["error": error.message])
            handle(feed.disconnect(reason: error.message), driver)
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
                driver.emit(.fix(fix))
            case .stateChanged(.connected):
                log.notice("gpsd connected", ["gpsd.endpoint": feed.endpoint])
                updateStatus(driver)
            case let .stateChanged(.disconnected(reason)):
                log.warning("gpsd disconnected", ["gpsd.endpoint": feed.endpoint, "reason": reason])
                epochAt = nil
                reconnectAt = driver.monotonic(after: feed.backoff.failed())
                updateStatus(driver)
            }
        }
    }

    private func updateStatus(_ driver: DriverContext) {
        let state: String = switch feed.state {
        case .connected: "connected"
        case let .disconnected(reason): "disconnected: \(reason)"
        }
        driver.status.gnss = .init(plugin: "gpsd", endpoint: feed.endpoint, state: state)
        driver.statusChanged()
    }
}
