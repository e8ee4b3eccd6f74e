import GeomonCore
import GeomonDaemon
import GeomonHooks
import GeomonStore
#if canImport(Glibc)
import Glibc
#endif

/// `geomon hooks`: Fires, lists, retries and inspects hook deliveries.
enum HooksCommand: Command {
    static let name = "hooks"
    static let summary = "Fires, lists, retries and inspects hook deliveries"
    static let help = """
    usage: geomon hooks fire --profile PROFILE --event enter|exit|dwell|location [--fence ID]
                             [--insecure-permissions]
           geomon hooks list  --db PATH
           geomon hooks dead  --db PATH
           geomon hooks retry --db PATH

    fire   Runs the profile's hooks for EVENT once, with a synthetic event at the fence
           (GEOMON_TEST=1), and prints each hook's outcome and output. Exit 0 when every
           hook exited 0, 1 otherwise. Nothing is stored; no retries.
    list   Prints pending, running and retrying deliveries: the event, the hook's command,
           the attempt count and the last error.
    dead   Prints dead-lettered deliveries (every attempt failed).
    retry  Requeues every dead delivery (attempts start again from 1).

    See docs/hooks.md for the environment, stdin JSON, retries and ordering.
    """

    /// Options of every subcommand, read before the subcommand word (argv order is free).
    private struct Options {
        var profile: String?
        var event: String?
        var fence: String?
        var db: String?
        var insecurePermissions = false
    }

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let options = Options(
            profile: try arguments.option("--profile"), event: try arguments.option("--event"),
            fence: try arguments.option("--fence"), db: try arguments.option("--db"),
            insecurePermissions: arguments.flag("--insecure-permissions")
        )
        let rest = try arguments.positionals()
        guard let sub = rest.first else { throw UsageError("missing subcommand (fire, list, dead or retry)") }
        guard rest.count == 1 else { throw UsageError("unexpected argument '\(rest[1])'") }
        switch sub {
        case "fire":
            if options.db != nil { throw UsageError("fire does not take --db") }
            return try fire(options)
        case "list", "dead", "retry":
            for (name, value) in [("--profile", options.profile), ("--event", options.event), ("--fence", options.fence)] where value != nil {
                throw UsageError("\(sub) does not take \(name)")
            }
            return try inspect(sub, options)
        default:
            throw UsageError("unknown subcommand '\(sub)' (expected fire, list, dead or retry)")
        }
    }

    // MARK: fire

    private static func fire(_ options: Options) throws -> Int32 {
        guard let profilePath = options.profile else { throw UsageError("fire needs --profile PROFILE") }
        let kinds = EventKind.allCases.map(\.rawValue)
        guard let kindText = options.event else { throw UsageError("fire needs --event \(kinds.joined(separator: "|"))") }
        guard let kind = EventKind(rawValue: kindText) else {
            throw UsageError("option '--event' must be one of \(kinds.joined(separator: ", ")) (got '\(kindText)')")
        }
        let profile = try loadProfileOrExit(profilePath, insecurePermissions: options.insecurePermissions)
        let event: GeoEvent
        do {
            event = try HookFire.syntheticEvent(profile: profile, kind: kind, fenceID: options.fence, now: WallClock.now())
        } catch let error as HookFire.FireError {
            throw UsageError(error.description)
        }
        let outcomes = HookFire.run(profile: profile, event: event, home: hookHome())
        if outcomes.isEmpty {
            print("no \(kind.rawValue) hooks in profile '\(profile.name)'")
            return 0
        }
        print(HookFire.render(outcomes), terminator: "")
        return outcomes.allSatisfy(\.result.succeeded) ? 0 : ExitCode.failure.code
    }

    // MARK: list / dead / retry

    private static func inspect(_ sub: String, _ options: Options) throws -> Int32 {
        guard let dbPath = options.db else { throw UsageError("\(sub) needs --db PATH") }
        let queue = try openDeliveryQueue(path: dbPath, writable: sub == "retry")
        switch sub {
        case "retry":
            let count = try queue.requeueDead()
            print("requeued \(count) dead \(count == 1 ? "delivery" : "deliveries")")
        case "dead":
            let dead = try queue.deliveries(status: .dead)
            print(dead.isEmpty ? "no dead deliveries" : DeliveryReport.render(dead), terminator: dead.isEmpty ? "\n" : "")
        default:
            var open: [GeomonHooks.Delivery] = []
            for status in [GeomonHooks.DeliveryStatus.pending, .running, .retrying] { open += try queue.deliveries(status: status) }
            print(open.isEmpty ? "no pending deliveries" : DeliveryReport.render(open), terminator: open.isEmpty ? "\n" : "")
        }
        return 0
    }

    // MARK: the store

    /// Opens the delivery store (read-only unless `writable`).
    static func openDeliveryQueue(path: String, writable: Bool = true) throws -> any DeliveryQueue {
        try requireReadable(path, what: "database")
        do {
            return StoreDeliveryQueue(store: try EventStore(path: path, readOnly: !writable))
        } catch let error as StoreError {
            writeStderr("geomon: error: \(error)")
            throw error.kind == .missing ? ExitCode.noInput : ExitCode.dataError
        }
    }

    private static func requireReadable(_ path: String, what: String) throws {
        if access(path, R_OK) != 0 {
            let reason = String(cString: strerror(errno))
            writeStderr("geomon: error: cannot read \(what) '\(path)': \(reason)")
            throw ExitCode.noInput
        }
    }

    /// HOME for hooks: the invoking user's, when set.
    private static func hookHome() -> String? {
        getenv("HOME").map { String(cString: $0) }
    }
}
