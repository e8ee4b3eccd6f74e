public import GeomonCore
import GeomonStore
import GeomonHooks
import FoundationEssentials

/// The delivery rows an event gets, computed once per profile: one per distinct hook command,
/// keyed like `HookCatalog` (the argv as JSON, so one script listed under `enter` and `exit`
/// is ONE hook and stays in order per fence), with the argv stored as it will run: `exec[0]`
/// resolved against the profile's directory, so a row stays runnable whatever the worker's
/// current directory is.
public struct HookTargets: Sendable {
    private var byKind: [EventKind: [DeliveryTarget]] = [:]

    public init(profile: Profile) {
        let directory = HookTargets.absoluteDirectory(profile.directory)
        for kind in EventKind.allCases {
            byKind[kind] = HookCatalog.targets(for: kind, in: profile.hooks).map { target in
                var argv = target.spec.exec
                if let program = argv.first {
                    argv[0] = HookRunner.resolveExecutable(program, directory: directory)
                }
                return DeliveryTarget(hookKey: target.key, argv: argv)
            }
        }
    }

    /// The rows to write with an event of `kind`, in profile order.
    public func targets(for kind: EventKind) -> [DeliveryTarget] {
        byKind[kind] ?? []
    }

    /// `directory` made absolute against the current directory.
    public static func absoluteDirectory(_ directory: String) -> String {
        if directory.hasPrefix("/") { return directory }
        let cwd = FileManager.default.currentDirectoryPath
        if directory.isEmpty || directory == "." { return cwd }
        var relative = Substring(directory)
        while relative.hasPrefix("./") { relative = relative.dropFirst(2) }
        return cwd + "/" + relative
    }
}
