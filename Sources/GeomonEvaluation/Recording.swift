public import GeomonCore

/// Fixes handed out one at a time, in time order: a recording being read, or an array.
/// Copies share their position (it is one reading), so a feed has one consumer.
public struct FixFeed: IteratorProtocol, Sequence {
    private let nextFix: () -> Fix?

    public init(_ next: @escaping () -> Fix?) {
        nextFix = next
    }

    /// The fixes of an array, in its order.
    public init(_ fixes: [Fix]) {
        var index = 0
        nextFix = {
            guard index < fixes.count else { return nil }
            defer { index += 1 }
            return fixes[index]
        }
    }

    public mutating func next() -> Fix? { nextFix() }
}

/// A recording that replay reads as often as it needs, each time from its start, in time order:
/// the driver's receiver model, the derived coarse feed, the derived motion sensor, the
/// always-on baseline and the oracle each read it once. Read from files (`geomon replay`), it
/// holds nothing but how to open them, so a replay's memory does not grow with the recording.
public struct Recording {
    /// The first and last fix times (nil when empty) and the number of fixes.
    public let start: UTCTime?
    public let end: UTCTime?
    public let count: Int
    private let open: () -> FixFeed

    /// A recording read through `open` (each call starts a new reading from the first fix),
    /// whose fixes are known to come in time order, with their first and last times and count.
    public init(start: UTCTime?, end: UTCTime?, count: Int, open: @escaping () -> FixFeed) {
        self.start = start
        self.end = end
        self.count = count
        self.open = open
    }

    /// The fixes in memory, in any order: sorted by time (stable).
    public init(fixes: [Fix]) {
        let sorted = fixes.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        self.init(start: sorted.first?.time, end: sorted.last?.time, count: sorted.count) { FixFeed(sorted) }
    }

    /// A new reading from the first fix.
    public func fixes() -> FixFeed { open() }
}
