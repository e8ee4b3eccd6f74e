#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
import GeomonHooks
import GeomonGeoClue
import GeomonSystem

/// The receiver's switches that take time (`sources.gnss.power: command` and `modemmanager`),
/// performed off the loop: the `command` method's programs on a thread of their own, one after
/// another, waking the loop through its completion pipe (`CompletionService`) when one
/// finished; ModemManager through sd-bus's asynchronous calls on the loop's poll (its socket,
/// its call timeouts on the kernel's monotonic clock). Fixes, hooks, MQTT and the systemd watchdog go on while a program runs
/// (up to its 10 s timeout) or a modem takes its time to answer (up to sd-bus's 25 s).
///
/// `GNSSService` asks for the switches (`submit`) and is told each one that finished
/// (`onFinished`, with whether nothing is left under way). It is listed before the GNSS
/// service, so it stops after it: the GNSS service's last switch (on, at shutdown) is waited
/// for with `switchNow`.
public final class ReceiverSwitchService: EventSource {
    public let name = "receiver-switch"
    private enum Performer {
        case programs(SerialProgramRunner, ReceiverPowerSwitch)
        case modem(ModemManagerLocation)
    }
    private let performer: Performer
    /// A switch finished: what it was for, what it came to, and whether none is under way.
    var onFinished: ((_ on: Bool, _ outcome: ReceiverPowerSwitch.Outcome, _ idle: Bool, DriverContext) -> Void)?

    /// The service for `method`, nil for the methods switched at once (`watch`, `ubx`, `mtk`).
    /// - Parameter busAddress: the D-Bus bus of `modemmanager` (nil: the system bus).
    /// - Parameter completions: the loop's wake when a program finished.
    public init?(method: GNSSPowerMethod, device: String?, directory: String, completions: CompletionService, busAddress: String? = nil) {
        switch method {
        case .command:
            let runner = SerialProgramRunner(onFinished: completions.wake)
            performer = .programs(runner, ReceiverPowerSwitch(method: method, device: device, directory: directory))
        case let .modemmanager(path):
            performer = .modem(ModemManagerLocation(modem: path, busAddress: busAddress))
        case .watch, .ubx, .mtk:
            return nil
        }
        completions.register { [unowned self] driver in collect(driver) }
    }

    public var pollRequest: PollRequest? {
        switch performer {
        case .programs: nil
        case let .modem(modem): modem.fileDescriptor.map { PollRequest(fd: $0, events: modem.pollEvents) }
        }
    }

    public var nextWake: Int64? {
        guard case let .modem(modem) = performer else { return nil }
        return modem.timeoutMicroseconds.map { Int64(clamping: $0) }
    }

    /// sd-bus's call timeouts are the kernel's monotonic clock (a replay never runs this service).
    public var wakeClock: WakeClock { .real }

    /// Nothing under way.
    public var isIdle: Bool {
        switch performer {
        case let .programs(runner, _): runner.isIdle
        case let .modem(modem): !modem.isBusy
        }
    }

    /// Starts switching the receiver on or off (after the switch under way, if any).
    func submit(on: Bool) {
        switch performer {
        case let .programs(runner, power):
            guard let invocation = power.commandInvocation(on: on) else { return }
            runner.submit(invocation, on: on)
        case let .modem(modem):
            modem.request(on: on)
        }
    }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        collect(driver)
    }

    /// The switches that finished, handed to `onFinished` in order.
    func collect(_ driver: DriverContext) {
        switch performer {
        case let .programs(runner, _):
            // Idle first, then what finished: when idle, nothing can finish after the taking.
            let idle = runner.isIdle
            let done = runner.takeFinished()
            for (k, finished) in done.enumerated() {
                onFinished?(finished.on, ReceiverPowerSwitch.outcome(of: finished.invocation, finished.result), idle && k == done.count - 1, driver)
            }
        case let .modem(modem):
            let done = modem.process()
            for (k, finished) in done.enumerated() {
                onFinished?(finished.on, Self.outcome(finished), !modem.isBusy && k == done.count - 1, driver)
            }
        }
    }

    /// The last switch, at shutdown (the loop is ending): `on` after the switch under way,
    /// waited for up to `timeout` in all; nil when it did not finish in time. Earlier switches
    /// that finish meanwhile are handed to `onFinished`.
    func finalSwitch(on: Bool, timeout: Duration, _ driver: DriverContext) -> ReceiverPowerSwitch.Outcome? {
        switch performer {
        case let .programs(runner, power):
            guard let invocation = power.commandInvocation(on: on) else { return .nothing }
            runner.submit(invocation, on: on)
            let idle = runner.waitUntilIdle(timeout: timeout)
            let done = runner.takeFinished()
            for (k, finished) in done.enumerated() {
                let outcome = ReceiverPowerSwitch.outcome(of: finished.invocation, finished.result)
                // Submitted last, run last: once idle, the last one finished is this one.
                if idle, k == done.count - 1 { return outcome }
                onFinished?(finished.on, outcome, false, driver)
            }
            return nil
        case let .modem(modem):
            modem.request(on: on)
            let done = modem.settle(until: UInt64(Monotonic.microseconds() + timeout.wholeMicroseconds))
            // Asked for last, finished last: once nothing is under way, the last one is this one.
            let ours = modem.isBusy ? nil : done.last
            for finished in done.dropLast(ours == nil ? 0 : 1) { onFinished?(finished.on, Self.outcome(finished), false, driver) }
            return ours.map(Self.outcome)
        }
    }

    /// Waits up to `timeout` for the switches under way (shutdown); whether none is left.
    func waitUntilIdle(timeout: Duration, _ driver: DriverContext) -> Bool {
        switch performer {
        case let .programs(runner, _):
            runner.waitUntilIdle(timeout: timeout)
            collect(driver)
        case let .modem(modem):
            let done = modem.settle(until: UInt64(Monotonic.microseconds() + timeout.wholeMicroseconds))
            for (k, finished) in done.enumerated() {
                onFinished?(finished.on, Self.outcome(finished), !modem.isBusy && k == done.count - 1, driver)
            }
        }
        return isIdle
    }

    static func outcome(_ finished: ModemManagerLocation.Completion) -> ReceiverPowerSwitch.Outcome {
        switch finished.result {
        case let .success(text): .switched(text)
        case let .failure(error): .failed(error.message)
        }
    }

    public func stop(_ driver: DriverContext) {
        if case let .modem(modem) = performer { modem.close() }
    }
}
