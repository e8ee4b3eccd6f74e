#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
public import GeomonGeoClue
import GeomonFormat
import GeomonStore

/// GeoClue2 as the coarse source (`sources.coarse.plugin: geoclue`): a client on the system bus
/// started while the power policy wants the coarse source on; sd-bus's socket and timeouts are
/// served by the driver (its timeouts are the kernel's monotonic clock).
public final class GeoClueService: EventSource, EffectSink {
    public let name = "geoclue"
    public let source: GeoClueSource
    private let log: Log

    public init(source: GeoClueSource, log: Log) {
        self.source = source
        self.log = log
    }

    public var pollRequest: PollRequest? {
        source.fileDescriptor.map { PollRequest(fd: $0, events: source.pollEvents) }
    }

    public var nextWake: Int64? { source.timeoutMicroseconds.map { Int64(clamping: $0) } }
    public var wakeClock: WakeClock { .real }

    public func start(_ driver: DriverContext) throws {
        updateStatus(driver)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        run(driver)
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        guard case let .power(action) = effect else { return }
        switch action {
        case .coarseOn where !source.isWanted:
            do {
                try source.start()
                log.info("GeoClue client requested", ["geoclue.accuracy": source.settings.level.rawValue])
            } catch {
                log.error("GeoClue unavailable", ["error": error.message])
            }
            run(driver)
        case .coarseOff where source.isWanted:
            source.stop()
            run(driver)
        default:
            break
        }
    }

    public func stop(_ driver: DriverContext) {
        source.stop()
    }

    /// The new machine starts with the coarse source off and asks for it if it wants it:
    /// the client is stopped here, not left running while the machine thinks it off.
    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        guard source.isWanted else { return }
        source.stop()
        run(driver)
    }

    private func run(_ driver: DriverContext) {
        for event in source.process() {
            switch event {
            case let .fix(fix):
                driver.emit(.fix(fix))
            case let .started(client):
                log.notice("GeoClue started", ["geoclue.client": client, "geoclue.accuracy": source.settings.level.rawValue])
            case let .failed(reason, first, retry):
                if first {
                    log.error("GeoClue failed; retrying", ["error": reason, "retry_s": NumberText.short(retry.secondsValue, 1)])
                } else {
                    log.debug("GeoClue still failing", ["error": reason, "retry_s": NumberText.short(retry.secondsValue, 1)])
                }
            case .vanished:
                log.warning("GeoClue left the bus; asking for a new client")
            }
        }
        updateStatus(driver)
    }

    private func updateStatus(_ driver: DriverContext) {
        let state = source.clientPath != nil ? "started" : (source.isRunning ? "waiting" : "off")
        let next = RuntimeStatus.Source(plugin: "geoclue", endpoint: source.clientPath, state: state, accuracy: source.settings.level.rawValue)
        driver.updateStatus(\.coarse, next)
    }
}
