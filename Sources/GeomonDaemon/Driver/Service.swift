public import GeomonCore
public import GeomonStore

/// A descriptor a service wants the driver to poll, and for what (`POLLIN`, `POLLOUT`).
public struct PollRequest: Equatable, Sendable {
    public var fd: Int32
    public var events: Int16
    public init(fd: Int32, events: Int16) {
        self.fd = fd
        self.events = events
    }
}

/// Which clock a service's `nextWake` is on.
public enum WakeClock: Sendable {
    /// The driver's clock (monotonic µs): the system's for `geomon run`, the virtual one for a
    /// replay. Timers that belong to the run's time: reconnects, retries, heartbeats.
    case driver
    /// The kernel's `CLOCK_MONOTONIC` whatever the driver's clock: a network protocol's own
    /// timers (MQTT's keepalive and connect timeout, sd-bus's call timeouts).
    case real
}

/// What a service hands the driver: the inputs it decides on, in order.
public enum DriverInput: Equatable, Sendable {
    /// A fix from a source (gpsd, the coarse command, GeoClue, replay's receiver model).
    case fix(Fix)
    /// The motion sensor's word (`sources.motion`; replay's derived signal); nil: it went silent.
    case motion(Motion?)
    /// Stop (SIGTERM, SIGINT, `--exit-after`), with what asked for it.
    case stop(String)
    /// Re-read the profile (SIGHUP).
    case reload
    /// Dead deliveries back in the queue (SIGUSR1 from `geomon hooks retry`).
    case requeueDead
    /// No input comes after this (replay: the recording ended).
    case end
    /// A fix is wanted now (`reportLocation`): the receiver is woken if off.
    case wakeRequest
    /// What the journal holds should be committed soon (a message queued outside a decision).
    case commitSoon
}

/// One outside thing, plugged into the driver: gpsd, the coarse command, GeoClue, hooks,
/// heartbeats, MQTT, systemd, the signal pipe, replay's receiver model.
///
/// A service has one shape: what to poll (a descriptor, or none), `process` what is ready at
/// the driver's `now` (handing inputs to the driver), and when it wants to run next. The driver
/// owns the one `poll(2)`, the clock and the order: services are started in the order given and
/// stopped in reverse. Nothing here runs a loop of its own or sleeps.
public protocol Service: AnyObject {
    /// For logs and tests.
    var name: String { get }
    /// What to poll now, if anything.
    var pollRequest: PollRequest? { get }
    /// When to `process` without input, on `wakeClock`, in monotonic microseconds; nil: only
    /// on input.
    var nextWake: Int64? { get }
    var wakeClock: WakeClock { get }
    /// Work under way that the driver's clock must not run past (replay: a hook process
    /// running, so that hooks finish in the order a live run sees them finish). A live clock
    /// never waits for it: real time goes on.
    var holdsClock: Bool { get }
    /// Whether the service has nothing left to do at the end of a replay (deliveries settled,
    /// messages acknowledged or given up on).
    var isSettled: Bool { get }

    func start(_ driver: DriverContext) throws
    /// Its descriptor was ready (`revents`), or its wake came (`revents` 0).
    func process(revents: Int16, _ driver: DriverContext) throws
    /// An effect of the machine, in order, after the journal stored it (switching the receiver
    /// and the coarse source, status, reports).
    func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws
    /// Events committed by the journal: the post-commit work (hooks, MQTT, printing).
    func committed(_ events: [StoredEvent], _ driver: DriverContext) throws
    /// The profile was reloaded (the machine is already the new one).
    func reloaded(_ profile: Profile, _ driver: DriverContext) throws
    /// Dead deliveries are back in the queue (`geomon hooks retry`): run them, reconnect.
    func requeueDead(_ driver: DriverContext) throws
    /// The driver stops (in reverse start order).
    func stop(_ driver: DriverContext)
}

extension Service {
    public var pollRequest: PollRequest? { nil }
    public var nextWake: Int64? { nil }
    public var wakeClock: WakeClock { .driver }
    public var holdsClock: Bool { false }
    public var isSettled: Bool { true }
    public func start(_ driver: DriverContext) throws {}
    public func process(revents: Int16, _ driver: DriverContext) throws {}
    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {}
    public func committed(_ events: [StoredEvent], _ driver: DriverContext) throws {}
    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {}
    public func requeueDead(_ driver: DriverContext) throws {}
    public func stop(_ driver: DriverContext) {}
}
