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

/// One reading of a recording shared by consumers that advance at their own pace (the run's
/// receiver model and coarse feed, the always-on baseline's): each gets every fix in order from
/// its own `reader()`, and a fix is held only until the last consumer has taken it, so what
/// is held is what lies between the slowest consumer and the fastest, not the recording.
/// Every reader must be made before the first fix is read. `onRead` sees each fix once, as it
/// is read from the recording (the oracle's count).
public final class SharedReading {
    private var feed: FixFeed
    /// Fixes read and not yet taken by every consumer; `buffer[head]` is fix number `base`.
    private var buffer: [Fix] = []
    private var head = 0
    private var base = 0
    private var positions: [Int] = []
    private var exhausted = false
    public var onRead: ((Fix) -> Void)?
    /// The most fixes held at once (tests, `--stats`).
    public private(set) var mostHeld = 0

    public init(_ feed: FixFeed) {
        self.feed = feed
    }

    /// A consumer's feed, from the first fix.
    public func reader() -> FixFeed {
        precondition(base == 0 && buffer.isEmpty, "a reader made after the reading began")
        let consumer = positions.count
        positions.append(0)
        return FixFeed { [self] in next(for: consumer) }
    }

    private func next(for consumer: Int) -> Fix? {
        let position = positions[consumer]
        let offset = head + position - base
        let fix: Fix
        if offset < buffer.count {
            fix = buffer[offset]
        } else {
            guard !exhausted, let read = feed.next() else {
                exhausted = true
                return nil
            }
            onRead?(read)
            fix = read
            buffer.append(read)
            mostHeld = max(mostHeld, buffer.count - head)
        }
        positions[consumer] = position + 1
        if position == base {
            // This consumer may have been the last to take the oldest fixes.
            let slowest = positions.min() ?? 0
            head += slowest - base
            base = slowest
            if head >= 4096, head * 2 >= buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
        }
        return fix
    }
}
