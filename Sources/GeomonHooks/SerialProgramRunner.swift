import GeomonCore

/// Runs programs with the hook runner's rules (`HookRunner`: no shell, a timeout, output
/// bounded) one after another, in the order they were submitted, on a thread of its own: the
/// caller's loop never waits for one, and collects what finished (`takeFinished`).
///
/// `geomon run` switches the receiver with it (`sources.gnss.power: command`): a power switch
/// may take seconds (a USB hub cycling a port, a modem tool), and fixes, hooks and MQTT go on
/// meanwhile.
public final class SerialProgramRunner: @unchecked Sendable {
    public struct Finished: Sendable {
        public let invocation: HookInvocation
        /// What the program was for (the caller's word: a power switch's on or off).
        public let on: Bool
        public let result: HookResult
    }

    private let condition = Condition()
    private var queue: [(invocation: HookInvocation, on: Bool)] = []
    private var finished: [Finished] = []
    private var running = false
    private let runner = HookRunner()
    private let onFinished: @Sendable () -> Void

    /// - Parameter onFinished: called on the runner's thread after each program finished (a
    ///   wake pipe: the caller's loop then collects it with `takeFinished`).
    public init(onFinished: @escaping @Sendable () -> Void = {}) {
        self.onFinished = onFinished
    }

    /// Queues `invocation` (`on`: what it is for, handed back with its result); it runs after
    /// every program submitted before it.
    public func submit(_ invocation: HookInvocation, on: Bool) {
        condition.lock()
        queue.append((invocation, on))
        let start = !running
        running = true
        condition.unlock()
        if start { startThread(named: "geomon-switch") { [self] in drain() } }
    }

    /// The programs that finished since the last call, in order.
    public func takeFinished() -> [Finished] {
        condition.lock()
        defer { condition.unlock() }
        let taken = finished
        finished.removeAll()
        return taken
    }

    /// Nothing queued or running.
    public var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !running
    }

    /// Waits until every submitted program finished or `timeout` passed; whether it is idle.
    @discardableResult
    public func waitUntilIdle(timeout: Duration) -> Bool {
        let deadline = Condition.deadline(after: max(0, timeout.secondsValue))
        condition.lock()
        defer { condition.unlock() }
        while running {
            if !condition.wait(until: deadline) { break }
        }
        return !running
    }

    private func drain() {
        while true {
            condition.lock()
            guard !queue.isEmpty else {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = queue.removeFirst()
            condition.unlock()
            let result = runner.run(job.invocation)
            condition.lock()
            finished.append(Finished(invocation: job.invocation, on: job.on, result: result))
            // Idle together with the last result: whoever takes it sees the runner idle.
            let more = !queue.isEmpty
            if !more { running = false }
            condition.broadcast()
            condition.unlock()
            onFinished()
            if !more { return }
        }
    }
}
