public import GeomonCore
public import GeomonStore

/// What a driver waits on: its clock and its inputs.
public enum MonitorInput: Equatable, Sendable {
    /// A fix arrived (GNSS or coarse).
    case fix(Fix)
    /// The machine's deadline came (dwell, scheduled wake, fix timeout).
    case deadline
    /// Something else woke the loop (a host timer, a signal, a hook finishing); nothing for the machine.
    case other
    /// Nothing is ready now and the clock only moves when a test advances it (`ManualClock`).
    case idle
    /// No more input (the recording ended, or the host stops).
    case end
}

/// Where a driver's fixes and time come from, and where its power actions go: gpsd and the
/// coarse command on the system clock (`geomon run`), or the receiver model on a virtual clock
/// (`geomon replay`).
public protocol MonitorSource: AnyObject {
    /// The machine's time base now.
    var now: UTCTime { get }
    /// Waits for the next input, at the latest until `deadline` (on the machine's time base).
    func next(until deadline: UTCTime?) throws -> MonitorInput
    /// Sees every effect of the machine, in order, as the driver performs it; acts on `.power`
    /// (switching the receiver and the coarse source).
    func observe(_ effect: Monitor.Effect, now: UTCTime)
}

/// The one driver: runs the decision machine from a source, performs its effects (the store
/// transaction, then the observers: hook deliveries, printing, logs, reports).
///
/// `geomon run` and `geomon replay` differ only in their source; `replay --compare-always-on`
/// runs a second driver without a journal. Reports, logs and pictures observe the effects;
/// nothing runs the machine twice.
public final class MonitorDriver {
    public private(set) var machine: Monitor
    /// The store; nil runs without storing (the always-on baseline of a comparison).
    public let journal: Journal?
    /// Inputs at or before this instant are decided again without storing or reporting their
    /// commits: a replay resuming on a database re-decides the recording up to the last
    /// committed fix, so every later decision is exactly the one an uninterrupted run makes.
    public var silentThrough: UTCTime?
    /// Every effect, after the source saw it (logs, reports).
    public var onEffect: ((Monitor.Effect, UTCTime) -> Void)?
    /// Events that are now committed (stored when there is a journal), after each commit.
    public var onCommitted: (([StoredEvent], UTCTime) throws -> Void)?

    public init(machine: Monitor, journal: Journal?) {
        self.machine = machine
        self.journal = journal
    }

    /// Starts the machine (the receiver or coarse source goes on).
    public func start(_ source: some MonitorSource) throws {
        try perform(machine.start(now: source.now), source)
    }

    /// Waits for one input and decides it. Returns the input (`.end` when there is no more).
    @discardableResult
    public func step(_ source: some MonitorSource) throws -> MonitorInput {
        let input = try source.next(until: machine.nextDeadline)
        switch input {
        case let .fix(fix):
            try perform(machine.fixReceived(fix, now: source.now), source)
        case .deadline:
            try perform(machine.deadlineReached(now: source.now), source)
        case .other, .idle, .end:
            break
        }
        return input
    }

    /// Steps until the source ends.
    public func run(_ source: some MonitorSource) throws {
        while true {
            let input = try step(source)
            if input == .end || input == .idle { return }
        }
    }

    /// Commits what the journal buffers.
    public func flush(now: UTCTime) throws {
        guard let journal else { return }
        let events = try journal.flush(now: now)
        if !events.isEmpty { try onCommitted?(events, now) }
    }

    private func perform(_ effects: [Monitor.Effect], _ source: some MonitorSource) throws {
        let now = source.now
        let silent = silentThrough.map { now <= $0 } ?? false
        for effect in effects {
            if case let .commit(commit) = effect, !silent {
                if let journal {
                    let events = try journal.add(commit, now: now)
                    if !events.isEmpty { try onCommitted?(events, now) }
                } else if !commit.events.isEmpty {
                    let profile = machine.profile.name
                    try onCommitted?(commit.events.enumerated().map { StoredEvent(seq: Int64($0.offset), profile: profile, event: $0.element) }, now)
                }
            }
            if case let .power(action) = effect, !silent { journal?.record(action, at: now) }
            source.observe(effect, now: now)
            if !silent { onEffect?(effect, now) }
        }
    }

    /// Replaces the machine (SIGHUP with a new profile).
    public func replace(_ machine: Monitor) {
        self.machine = machine
    }
}
