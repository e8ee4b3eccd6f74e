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
    /// The activity the motion source senses (`{"activity": …}`; replay's derived signal);
    /// nil: none any more.
    case activity(Activity?)
    /// The power supply: the battery's capacity and whether external power is online (`run`:
    /// the kernel's power-supply class; `replay --power-supply`).
    case supply(PowerSupplyReading)
    /// Stop (SIGTERM, SIGINT, `--exit-after`), with what asked for it.
    case stop(String)
    /// Re-read the profile (SIGHUP).
    case reload
    /// Dead deliveries back in the queue (SIGUSR1 from `geomon hooks retry`).
    case requeueDead
    /// Skip the broker's reconnect backoff and publish what is pending (SIGUSR2 from `geomon
    /// publish retry`).
    case publishNow
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
/// A service is its lifecycle — started in the order given, told of a reload, stopped in
/// reverse — and takes on the roles it has, each a protocol of its own: an `EventSource` (what
/// to poll, when to wake, `process` what is ready, handing the driver inputs), an
/// `EffectSink` (the machine's effects and each commit's events), `ClockHolding` (work a
/// virtual clock must wait for: the clock's business, never a live run's) and `DeadLetters`
/// (`geomon hooks retry`'s requeue). The driver owns the one `poll(2)`, the clock and the
/// order; nothing here runs a loop of its own or sleeps.
public protocol Service: AnyObject {
    /// For logs and tests.
    var name: String { get }
    func start(_ driver: DriverContext) throws
    /// The profile was reloaded (the machine is already the new one).
    func reloaded(_ profile: Profile, _ driver: DriverContext) throws
    /// The driver stops (in reverse start order).
    func stop(_ driver: DriverContext)
}

/// A service that hands the driver inputs: a descriptor to poll, a wake, or both.
public protocol EventSource: Service {
    /// What to poll now, if anything.
    var pollRequest: PollRequest? { get }
    /// When to `process` without input, on `wakeClock`, in monotonic microseconds; nil: only
    /// on input.
    var nextWake: Int64? { get }
    var wakeClock: WakeClock { get }
    /// Its descriptor was ready (`revents`), or its wake came (`revents` 0).
    func process(revents: Int16, _ driver: DriverContext) throws
}

/// A service that acts on what the driver decided.
public protocol EffectSink: Service {
    /// An effect of the machine, in order, after the journal stored it (switching the receiver
    /// and the coarse source, status, reports).
    func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws
    /// Events committed by the journal: the post-commit work (hooks, MQTT, printing).
    func committed(_ events: [StoredEvent], _ driver: DriverContext) throws
}

/// Work under way that a virtual clock must not run past, and whether any is left at the end
/// of a replay. A live clock never waits for it: real time goes on.
public protocol ClockHolding: Service {
    /// A replay's clock waits while this holds (a hook process running, so that hooks finish
    /// in the order a live run sees them finish).
    var holdsClock: Bool { get }
    /// Nothing left to do at the end of a replay (deliveries settled, messages acknowledged
    /// or given up on).
    var isSettled: Bool { get }
}

/// A service with a dead letter queue (`geomon hooks retry`, SIGUSR1).
public protocol DeadLetters: Service {
    /// Put the dead deliveries back in the queue and run them.
    func requeueDead(_ driver: DriverContext) throws
}

/// A service that publishes to a broker (`geomon publish retry`, SIGUSR2).
public protocol PublishesNow: Service {
    /// Skip the reconnect backoff and publish what is pending.
    func publishNow(_ driver: DriverContext) throws
}

extension Service {
    public func start(_ driver: DriverContext) throws {}
    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {}
    public func stop(_ driver: DriverContext) {}
}

extension EventSource {
    public var pollRequest: PollRequest? { nil }
    public var nextWake: Int64? { nil }
    public var wakeClock: WakeClock { .driver }
}

extension EffectSink {
    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {}
    public func committed(_ events: [StoredEvent], _ driver: DriverContext) throws {}
}

extension ClockHolding {
    public var holdsClock: Bool { false }
    public var isSettled: Bool { true }
}
