extension StringProtocol {
    /// The text without leading and trailing whitespace (spaces, tabs, newlines): what sysfs
    /// attributes and hand-written values need before they are compared or parsed.
    public func trimmingWhitespace() -> Substring {
        let s = Substring(self)
        guard let first = s.firstIndex(where: { !$0.isWhitespace }) else { return s[s.endIndex...] }
        let last = s.lastIndex(where: { !$0.isWhitespace })!
        return s[first...last]
    }
}

/// The directory part of a file path, as `dirname(1)` without its ".": `/a/b` → `/a`,
/// `/b` → `/`, `b` → `` (the current directory), trailing slashes ignored.
public func directoryPart(of path: String) -> String {
    var p = Substring(path)
    while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
    guard let slash = p.lastIndex(of: "/") else { return "" }
    var directory = p[..<slash]
    while directory.count > 1, directory.hasSuffix("/") { directory = directory.dropLast() }
    return directory.isEmpty ? "/" : String(directory)
}

/// A value kept on the heap: a large, rarely set member (an event's figures, a commit's
/// movement state) costs its owner one pointer, so the values copied on every fix stay small.
public final class Boxed<Value: Hashable & Sendable>: Hashable, Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
    public static func == (a: Boxed, b: Boxed) -> Bool { a === b || a.value == b.value }
    public func hash(into hasher: inout Hasher) { hasher.combine(value) }
}

extension Double {
    /// The nearest `Int`, held within `Int`'s range (NaN: 0): for figures written as whole
    /// numbers, where a converting `Int(_:)` would trap on a value too large.
    public var roundedClampedToInt: Int {
        guard !isNaN else { return 0 }
        let r = rounded()
        if r >= 9.2e18 { return Int.max }
        if r <= -9.2e18 { return Int.min }
        return Int(r)
    }
}
