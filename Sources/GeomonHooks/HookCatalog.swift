public import GeomonCore
import GeomonFormat

/// The profile's hooks by identity.
///
/// A hook's key is its `exec` argv as a JSON array (`["./notify.sh","--verbose"]`): the same
/// command listed under `enter` and `exit` is ONE hook, so an exit never overtakes the enter
/// of the same fence on its way to that script. Each event's delivery runs with the entry
/// listed under its own kind (`timeout`, `when`, `env`), as `geomon hooks fire` does.
public struct HookCatalog: Sendable {
    private var specs: [String: [EventKind: HookSpec]] = [:]

    public init(settings: HookSettings) {
        for kind in EventKind.allCases {
            for spec in settings.hooks(for: kind) where specs[HookCatalog.key(for: spec)]?[kind] == nil {
                specs[HookCatalog.key(for: spec), default: [:]][kind] = spec
            }
        }
    }

    public static func key(for spec: HookSpec) -> String {
        key(forArgv: spec.exec)
    }

    public static func key(forArgv argv: [String]) -> String {
        JSON.array(argv)
    }

    /// The spec for a stored delivery's key and its event's kind: the entry under that kind,
    /// else (the profile moved the command to other events since) the first listed; nil when
    /// the profile no longer lists that command (the delivery then runs with its stored argv,
    /// the default timeout and no conditions).
    public func spec(forKey key: String, kind: EventKind) -> HookSpec? {
        guard let byKind = specs[key] else { return nil }
        return byKind[kind] ?? EventKind.allCases.lazy.compactMap { byKind[$0] }.first
    }

    /// Commands an edit of the profile replaced (a reload): an old command the new profile no
    /// longer lists, paired with the new command at its place in the list of every event kind
    /// that listed it — when each of those lists is as long as before (an edit in place), all
    /// those places hold the same command, one the old profile did not list, and no other old
    /// command pairs with it. The deliveries queued for the old
    /// command follow the new one (its `exec`, `env`, `when`, `timeout`, and its place in the
    /// per-fence order); anything less clear is left as it was.
    public static func replacements(from old: HookSettings, to new: HookSettings) -> [(from: String, to: String, argv: [String])] {
        let oldKeys = Set(EventKind.allCases.flatMap { targets(for: $0, in: old).map(\.key) })
        let newKeys = Set(EventKind.allCases.flatMap { targets(for: $0, in: new).map(\.key) })
        var pairing: [String: (key: String, argv: [String])?] = [:]
        var order: [String] = []
        for kind in EventKind.allCases {
            let before = targets(for: kind, in: old)
            let after = targets(for: kind, in: new)
            for (index, entry) in before.enumerated() where !newKeys.contains(entry.key) {
                // An edit in place: the list as long as before, the new command new.
                let candidate = after.count == before.count && !oldKeys.contains(after[index].key) ? (after[index].key, after[index].spec.exec) : nil
                if !order.contains(entry.key) { order.append(entry.key) }
                if let known = pairing[entry.key] {
                    if known?.key != candidate?.0 { pairing[entry.key] = .some(nil) }
                } else {
                    pairing[entry.key] = candidate.map { (key: $0.0, argv: $0.1) }
                }
            }
        }
        let pairs = order.compactMap { key in pairing[key].flatMap { $0 }.map { (from: key, to: $0.key, argv: $0.argv) } }
        let targetsCount = Dictionary(grouping: pairs, by: \.to).mapValues(\.count)
        return pairs.filter { targetsCount[$0.to] == 1 }
    }

    /// The hooks an event of `kind` must be delivered to, one per distinct command, in profile
    /// order: the store writes one delivery row per entry, in the event's transaction.
    public static func targets(for kind: EventKind, in settings: HookSettings) -> [(key: String, spec: HookSpec)] {
        var seen = Set<String>()
        var result: [(key: String, spec: HookSpec)] = []
        for spec in settings.hooks(for: kind) {
            let key = key(for: spec)
            if seen.insert(key).inserted { result.append((key, spec)) }
        }
        return result
    }
}
