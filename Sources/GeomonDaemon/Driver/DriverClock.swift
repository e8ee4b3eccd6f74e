#if canImport(Glibc)
public import Glibc
#endif
public import GeomonCore

/// What a wait came to.
public enum WaitOutcome: Equatable, Sendable {
    /// Descriptors are ready (their `revents` are set).
    case ready
    /// The deadline came (the clock is at or past it).
    case deadline
    /// Nothing is ready and the clock moves only when a test advances it (`ManualClock`).
    case idle
    /// Nothing will ever be ready: no descriptor, no deadline, and a clock that does not move
    /// by itself (a replay whose inputs ended).
    case exhausted
}

/// The driver's clock: the machine's time, the monotonic microseconds the services' timers are
/// on, and the one place the driver waits.
///
/// `geomon run` has a `LiveClock` (the system's clocks, the machine's time anchored on the
/// receiver's); `geomon replay` a `VirtualClock` that jumps from one deadline to the next (or
/// sleeps the scaled time with `--speed`). The driver is the same for both.
public protocol DriverClock: AnyObject {
    /// The machine's time now.
    var now: UTCTime { get }
    /// Monotonic microseconds on this clock (the services' `.driver` timers).
    var monotonic: Int64 { get }
    /// The wall clock: the system's in a live run, the virtual time in a replay.
    var wall: UTCTime { get }
    /// The monotonic instant (this clock's) at which the machine's time reaches `time`.
    func monotonic(at time: UTCTime) -> Int64
    /// A fix the machine is about to take arrived: the machine's time may re-anchor on it.
    /// Returns how far the time base moved when it left the system clock (what was recorded
    /// before is on the old base), else nil.
    func fixArrived(_ time: UTCTime) -> Duration?
    /// Whether a fix dated `time` may be taken at all (a live clock refuses a date far ahead
    /// of it: `DaemonClock.admits`).
    func admits(_ time: UTCTime) -> Bool
    /// The time to take a coarse fix dated `time` at (a live clock takes one dated far ahead of
    /// it at its own time: `DaemonClock.coarseTime`).
    func coarseTime(_ time: UTCTime) -> UTCTime
    /// Waits for `polls` until `deadline` (this clock's monotonic) or `realDeadline` (the
    /// kernel's monotonic), whichever comes first. `holding`: work under way that the clock
    /// must not run past (a virtual clock then waits in real time for the descriptors).
    func wait(_ polls: inout [pollfd], until deadline: Int64?, realDeadline: Int64?, holding: Bool) -> WaitOutcome
    /// The inputs ended: what is left runs in real time (a virtual clock follows it from now).
    func inputsEnded()
}

/// `geomon run`'s clock: the host's (the system's, or a test's `ManualClock`), with the
/// machine's time anchored on the receiver's (`DaemonClock`).
public final class LiveClock: DriverClock {
    public let host: any HostClock
    private var daemonClock: DaemonClock

    public init(host: any HostClock) {
        self.host = host
        daemonClock = DaemonClock(host: host)
    }

    public var now: UTCTime { daemonClock.now }
    public var monotonic: Int64 { host.monotonicMicroseconds }
    public var wall: UTCTime { host.wall }
    public func monotonic(at time: UTCTime) -> Int64 { daemonClock.monotonic(at: time) }
    public func fixArrived(_ time: UTCTime) -> Duration? { daemonClock.fixArrived(time) }
    public func admits(_ time: UTCTime) -> Bool { daemonClock.admits(time) }
    public func coarseTime(_ time: UTCTime) -> UTCTime { daemonClock.coarseTime(time) }
    public func inputsEnded() {}

    public func wait(_ polls: inout [pollfd], until deadline: Int64?, realDeadline: Int64?, holding: Bool) -> WaitOutcome {
        let mono = host.monotonicMicroseconds
        // The host's monotonic clock is the kernel's here (or a test's stand-in for both).
        let wake = [deadline, realDeadline].compactMap { $0 }.min()
        switch host.poll(&polls, timeoutMicroseconds: wake.map { max(0, $0 - mono) }) {
        case .ready: return .ready
        case .timedOut: return .deadline
        case .wouldBlock: return .idle
        }
    }
}

/// A replay's clock: virtual time that jumps to the next deadline when nothing is ready, or,
/// with `speed`, moves `speed` times faster than real time while the driver waits in `poll`
/// (the services' descriptors — hooks, the MQTT broker — are served meanwhile). Work that holds
/// the clock (a hook running) is waited for in real time with the virtual clock standing still.
///
/// Once the inputs ended (`followRealTime`), it goes on in real time: what is left to do at the
/// end (hook retries, held-back deliveries, the broker's acknowledgements) takes the time it
/// takes.
public final class VirtualClock: DriverClock {
    private var virtualNow: UTCTime
    /// From here on the clock is real time (virtual, real µs).
    private var realAnchor: (time: UTCTime, micros: Int64)?
    /// Real time per virtual time; nil: as fast as possible.
    public let speed: Double?
    /// Virtual time up to which nothing is paced (a resumed replay re-decides what its
    /// database already holds at full speed).
    public var unpacedThrough: UTCTime?

    public init(start: UTCTime, speed: Double? = nil) {
        virtualNow = start
        self.speed = speed
    }

    public var now: UTCTime {
        get {
            guard let realAnchor else { return virtualNow }
            return realAnchor.time + .microseconds(SystemHostClock.monotonicMicroseconds() - realAnchor.micros)
        }
        set { virtualNow = newValue }
    }

    /// From now on the clock moves with real time.
    public func inputsEnded() {
        guard realAnchor == nil else { return }
        realAnchor = (virtualNow, SystemHostClock.monotonicMicroseconds())
    }

    public var monotonic: Int64 {
        guard let realAnchor else { return virtualNow.millisecondsSince1970 * 1000 }
        return realAnchor.time.millisecondsSince1970 * 1000 + SystemHostClock.monotonicMicroseconds() - realAnchor.micros
    }
    public var wall: UTCTime { now }
    public func monotonic(at time: UTCTime) -> Int64 { time.millisecondsSince1970 * 1000 }
    public func fixArrived(_ time: UTCTime) -> Duration? { nil }
    public func admits(_ time: UTCTime) -> Bool { true }
    public func coarseTime(_ time: UTCTime) -> UTCTime { time }

    public func wait(_ polls: inout [pollfd], until deadline: Int64?, realDeadline: Int64?, holding: Bool) -> WaitOutcome {
        // The kernel's clock only when real time matters (a jump of virtual time reads none).
        let realNow = realAnchor != nil || realDeadline != nil || holding || speed != nil ? SystemHostClock.monotonicMicroseconds() : 0
        if let realAnchor {
            // Real time: wait for the descriptors until the earliest deadline.
            let virtualWake = deadline.map { realAnchor.micros + $0 - realAnchor.time.millisecondsSince1970 * 1000 }
            guard let wake = [virtualWake, realDeadline].compactMap({ $0 }).min() else {
                return Self.poll(&polls, timeoutMicroseconds: holding ? 50_000 : 0) ? .ready : (holding ? .deadline : .exhausted)
            }
            return Self.poll(&polls, timeoutMicroseconds: max(0, wake - realNow)) ? .ready : .deadline
        }
        let realTimeout = realDeadline.map { max(0, $0 - realNow) }
        if holding {
            // Real work under way: the virtual clock waits for it (or for a real timer).
            return Self.poll(&polls, timeoutMicroseconds: min(realTimeout ?? 50_000, 50_000)) ? .ready : .deadline
        }
        if Self.poll(&polls, timeoutMicroseconds: 0) { return .ready }
        guard let deadline else {
            guard let realTimeout else { return .exhausted }
            return Self.poll(&polls, timeoutMicroseconds: realTimeout) ? .ready : .deadline
        }
        let target = UTCTime(millisecondsSince1970: (deadline + 999) / 1000)
        if let speed, target > now, unpacedThrough.map({ target > $0 }) ?? true {
            // Paced: the jump takes its scaled real time, spent waiting on the descriptors;
            // virtual time goes on as far as real time did.
            let from = max(now, unpacedThrough ?? now)
            let total = Int64(((target - from).secondsValue / speed * 1e6).rounded())
            while true {
                let elapsed = SystemHostClock.monotonicMicroseconds() - realNow
                if elapsed >= total { break }
                let timeout = min(total - elapsed, realDeadline.map { max(0, $0 - realNow - elapsed) } ?? Int64.max)
                let ready = Self.poll(&polls, timeoutMicroseconds: timeout)
                let spent = Double(SystemHostClock.monotonicMicroseconds() - realNow) / 1e6 * speed
                now = max(now, min(target, from + .milliseconds(Int64(spent * 1000))))
                if ready { return .ready }
                if let realDeadline, SystemHostClock.monotonicMicroseconds() >= realDeadline { return .deadline }
            }
        }
        if target > now { now = target }
        return .deadline
    }

    /// poll(2) on `polls`; true when one is ready.
    static func poll(_ polls: inout [pollfd], timeoutMicroseconds: Int64) -> Bool {
        guard !polls.isEmpty else {
            if timeoutMicroseconds > 0 { usleep(UInt32(min(timeoutMicroseconds, 1_000_000))) }
            return false
        }
        let timeout = Int32(clamping: (timeoutMicroseconds + 999) / 1000)
        return Glibc.poll(&polls, nfds_t(polls.count), timeout) > 0
    }
}
