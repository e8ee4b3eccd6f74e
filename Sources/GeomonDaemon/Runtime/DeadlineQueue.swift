/// The live daemon's timers, one queue on one clock (monotonic microseconds): each key is
/// scheduled at most once; due keys come out in deadline order, ties in the order scheduled.
public struct DeadlineQueue<Key: Hashable & Sendable>: Sendable {
    private var entries: [(key: Key, at: Int64, order: Int)] = []
    private var counter = 0

    public init() {}

    /// Schedules `key` at `at`, replacing an earlier schedule of the same key.
    public mutating func schedule(_ key: Key, at: Int64) {
        entries.removeAll { $0.key == key }
        counter += 1
        entries.append((key, at, counter))
    }

    /// Schedules `key` at `at` unless it is already due sooner.
    public mutating func scheduleEarliest(_ key: Key, at: Int64) {
        if let existing = deadline(of: key), existing <= at { return }
        schedule(key, at: at)
    }

    public mutating func cancel(_ key: Key) {
        entries.removeAll { $0.key == key }
    }

    public func deadline(of key: Key) -> Int64? {
        entries.first { $0.key == key }?.at
    }

    /// The earliest deadline, if any.
    public var earliest: Int64? { entries.map(\.at).min() }

    public var isEmpty: Bool { entries.isEmpty }

    /// Removes and returns every key due at `now`, in deadline order (ties: first scheduled first).
    public mutating func popDue(now: Int64) -> [Key] {
        let due = entries.filter { $0.at <= now }.sorted { ($0.at, $0.order) < ($1.at, $1.order) }
        guard !due.isEmpty else { return [] }
        entries.removeAll { $0.at <= now }
        return due.map(\.key)
    }
}
