import Foundation
import GeomonCore
import GeomonDaemon
import GeomonHooks
import GeomonStore

/// `geomon replay`'s hook delivery: started before the replay (delivering what a previous run
/// left pending), fed by each commit, drained after the last fix.
enum ReplayHooks {
    /// The delivery driver for `monitor`'s commits; nil with `--no-hooks`.
    static func start(profile: Profile, store: EventStore, enabled: Bool) throws -> ReplayHookDelivery? {
        guard enabled else { return nil }
        let home = ProcessInfo.processInfo.environment["HOME"]
        let hooks = try ReplayHookDelivery(
            profile: profile, store: store, probe: .fromEnvironment(), home: home,
            log: { writeStderr("geomon: \($0)") })
        try hooks.poll()
        return hooks
    }

    /// Waits until every delivery is delivered or dead-lettered; warns about dead ones.
    static func finish(_ hooks: ReplayHookDelivery?, dbPath: String?) throws {
        guard let hooks else { return }
        let summary = try hooks.drain()
        if summary.deadInStore > 0 {
            let where_ = dbPath.map { "see 'geomon hooks dead --db \($0)'" } ?? "the temporary database is removed; use --db to keep them"
            writeStderr("geomon: warning: \(summary.deadInStore) hook \(summary.deadInStore == 1 ? "delivery" : "deliveries") dead-lettered (\(where_))")
        }
    }
}
