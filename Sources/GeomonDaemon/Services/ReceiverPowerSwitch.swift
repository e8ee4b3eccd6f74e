public import GeomonCore
public import GeomonSources
public import GeomonHooks
import GeomonGeoClue

/// The power method's switch (`sources.gnss.power`): bytes written to the receiver through
/// gpsd (`ubx`, `mtk`) or the profile's program (`command`); `watch` switches nothing here
/// (its switch is gpsd's watch). Used by `geomon run` (GNSSService) and `geomon receiver test`.
public struct ReceiverPowerSwitch: Sendable {
    public enum Outcome: Equatable, Sendable {
        /// Done (the bytes were written or the program succeeded), with what was done.
        case switched(String)
        /// Nothing to do for this method.
        case nothing
        /// It could not be done, and why.
        case failed(String)

        public var isFailed: Bool {
            if case .failed = self { return true }
            return false
        }
    }

    public let method: GNSSPowerMethod
    /// The profile's `sources.gnss.device`, if any.
    public let device: String?
    /// The profile's directory, the command's working directory.
    public let directory: String

    /// The modem's location interface (`modemmanager`), which remembers the GNSS sources it
    /// switched off so that on restores them.
    private let modem: ModemManagerLocation?

    /// - Parameter busAddress: the D-Bus bus of `modemmanager` (nil: the system bus).
    public init(method: GNSSPowerMethod, device: String?, directory: String, busAddress: String? = nil) {
        self.method = method
        self.device = device
        self.directory = directory
        if case let .modemmanager(path) = method {
            modem = ModemManagerLocation(modem: path, busAddress: busAddress)
        } else {
            modem = nil
        }
    }

    /// Switches the receiver on or off. `feed` is gpsd (for the device path and the write).
    public func set(on: Bool, feed: any GNSSFeed) -> Outcome {
        switch method {
        case .watch:
            return .nothing
        case .ubx, .mtk:
            guard let bytes = on ? ReceiverCommands.on(method) : ReceiverCommands.off(method) else { return .nothing }
            guard let path = devicePath(feed) else {
                return on ? .nothing : .failed("gpsd has not named the receiver's device yet; set sources.gnss.device")
            }
            do {
                try feed.sendToDevice(bytes, device: path)
                return .switched("wrote \(bytes.count) bytes to \(path) through gpsd")
            } catch {
                return .failed(error.message)
            }
        case .modemmanager:
            guard let modem else { return .nothing }
            do {
                return .switched(try modem.set(on: on))
            } catch {
                return .failed(error.message)
            }
        case .command:
            guard let invocation = commandInvocation(on: on) else { return .nothing }
            return Self.outcome(of: invocation, HookRunner().run(invocation))
        }
    }

    /// Where `ubx`/`mtk` bytes go: the profile's device, else the one that reported, else the
    /// one gpsd lists (a receiver left off by a run that ended never reports: only its listing
    /// names it); nil while gpsd has named none.
    public func devicePath(_ feed: any GNSSFeed) -> String? {
        device ?? feed.reportingDevice ?? feed.listedDevice
    }

    /// The `command` method's program for switching on or off, run with the hook runner's
    /// rules (no shell, a clean environment, 10 s timeout, output bounded); nil for the others.
    public func commandInvocation(on: Bool) -> HookInvocation? {
        guard case let .command(onArgv, offArgv) = method else { return nil }
        return HookInvocation(argv: on ? onArgv : offArgv, environment: HookEnvironment.base(home: nil), stdin: [],
                              workingDirectory: HookTargets.absoluteDirectory(directory), timeout: .seconds(10))
    }

    /// What running `invocation` came to.
    public static func outcome(of invocation: HookInvocation, _ result: HookResult) -> Outcome {
        let argv = invocation.argv.joined(separator: " ")
        return result.succeeded ? .switched("ran \(argv)") : .failed("\(argv): \(result.summary)")
    }
}
