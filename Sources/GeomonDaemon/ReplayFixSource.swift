public import GeomonCore
public import GeomonStore

/// Where replay's fixes come from, and the seam for the power policy's receiver model.
///
/// The default, `RecordedFixes`, delivers every recorded fix as is (receiver always on). A
/// receiver model (issue 6) implements the same protocol: it withholds fixes while the policy
/// has the receiver off, synthesizes the first fix after a wake-up (TTFF, interpolation), and
/// asks for control at its own instants (`nextWake`, e.g. `wakeAt(T)` or `fix_timeout`).
/// The replay loop always handles the earliest of: the engine's deadline, the source's wake,
/// the source's next fix (deadlines and wakes strictly before a fix go first).
public protocol ReplayFixSource: AnyObject {
    /// The next fix the receiver delivers (not consumed), or nil when there are no more.
    func peekFix() -> Fix?
    /// Consumes the fix `peekFix()` returned.
    func advance()
    /// The next instant the source needs control without a fix, if any.
    var nextWake: UTCTime? { get }
    /// Called when the virtual clock reaches `nextWake`.
    func wakeReached(at time: UTCTime)
    /// Events committed for the fix or deadline just handled (a policy may react to them).
    func observe(_ events: [StoredEvent])
    /// Fixes of the recording the receiver did not deliver (for the summary).
    var withheldCount: Int { get }
}

extension ReplayFixSource {
    public var nextWake: UTCTime? { nil }
    public func wakeReached(at time: UTCTime) {}
    public func observe(_ events: [StoredEvent]) {}
    public var withheldCount: Int { 0 }
}

/// The recorded fixes, delivered as they are.
public final class RecordedFixes: ReplayFixSource {
    private let fixes: [Fix]
    private var position = 0

    public init(_ fixes: [Fix]) {
        self.fixes = fixes
    }

    public var count: Int { fixes.count }
    public var consumed: Int { position }

    public func peekFix() -> Fix? {
        position < fixes.count ? fixes[position] : nil
    }

    public func advance() {
        position += 1
    }
}
