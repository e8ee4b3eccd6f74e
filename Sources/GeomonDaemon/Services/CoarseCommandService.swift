#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonStore
public import GeomonSources
import GeomonFormat

/// The coarse position command (`sources.coarse.exec`): started while the power policy wants
/// the coarse source on, its JSON lines read as fixes, started again `restartInterval` after
/// it exits while it is still wanted.
public final class CoarseCommandService: EventSource, EffectSink {
    public let name = "coarse-command"
    public let command: CommandSource
    private let log: Log
    private var wanted = false
    private var restartAt: Int64?
    /// The program running now printed malformed lines (warned once).
    private var malformedWarned = false

    public init(command: CommandSource, log: Log) {
        self.command = command
        self.log = log
    }

    public var pollRequest: PollRequest? {
        command.fileDescriptor.map { PollRequest(fd: $0, events: Int16(POLLIN)) }
    }

    public var nextWake: Int64? { restartAt }

    public func start(_ driver: DriverContext) throws {
        updateStatus(driver)
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        if let at = restartAt, at <= driver.monotonic {
            restartAt = nil
            if wanted { launch(driver) }
        }
        guard revents != 0 else { return }
        let before = command.malformedLines
        for event in command.readAvailable() {
            switch event {
            case let .fix(fix):
                driver.emit(.fix(fix))
            case .motion:
                break
            case let .exited(status):
                log.info("coarse source exited", ["exit_status": "\(status)", "restart_s": NumberText.short(command.restartInterval.secondsValue, 3)])
                if wanted { restartAt = driver.monotonic(after: command.restartInterval) }
                updateStatus(driver)
            }
        }
        if command.malformedLines > before {
            // Once per start of the program (the lines are counted in `geomon status`), not on
            // every read: a plugin printing a debug line before each fix would flood the log.
            if !malformedWarned {
                malformedWarned = true
                log.warning("coarse source printed malformed lines", ["count": "\(command.malformedLines - before)", "error": command.lastError ?? "-"])
            }
            updateStatus(driver)
        }
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        guard case let .power(action) = effect else { return }
        switch action {
        case .coarseOn:
            wanted = true
            if !command.isRunning { launch(driver) }
        case .coarseOff:
            wanted = false
            restartAt = nil
            if command.isRunning {
                command.stop()
                updateStatus(driver)
            }
        case .gnssOn, .gnssOff, .wakeAt:
            break
        }
    }

    public func stop(_ driver: DriverContext) {
        command.stop()
    }

    /// The new machine starts with the coarse source off and switches it on if it wants it:
    /// stopped here, so it is not left running while the machine thinks it off.
    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        wanted = false
        restartAt = nil
        if command.isRunning {
            command.stop()
            updateStatus(driver)
        }
    }

    private func launch(_ driver: DriverContext) {
        do {
            try command.start()
            restartAt = nil
            malformedWarned = false
            log.info("coarse source started", ["coarse.cmd": command.arguments.joined(separator: " ")])
        } catch {
            log.warning("coarse source failed to start", ["error": error.description])
            restartAt = driver.monotonic(after: command.restartInterval)
        }
        updateStatus(driver)
    }

    private func updateStatus(_ driver: DriverContext) {
        driver.updateStatus(\.coarse, .init(plugin: "command", endpoint: command.arguments.joined(separator: " "),
                                            state: command.isRunning ? "running" : "stopped", malformedLines: command.malformedLines))
    }
}
