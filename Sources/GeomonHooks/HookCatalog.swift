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
