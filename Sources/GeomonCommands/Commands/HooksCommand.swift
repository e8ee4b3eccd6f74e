import GeomonCore
import GeomonSystem
import GeomonDaemon
import GeomonHooks
import GeomonStore
#if canImport(Glibc)
import Glibc
#endif

/// `geomon hooks fire|list|dead|retry`.
enum HooksCommand {
    static let group = CommandGroup(
        name: "hooks",
        abstract: "Fires, lists, retries and inspects hook deliveries",
        discussion: "See docs/hooks.md for the environment, stdin JSON, retries and ordering.",
        subcommands: [HooksFireCommand.self, HooksListCommand.self, HooksDeadCommand.self, HooksRetryCommand.self]
    )

    /// Opens the delivery store (read-only unless `writable`).
    static func openQueue(path: String, writable: Bool) throws -> EventStore {
        if access(path, R_OK) != 0 {
            // Worded as the reading commands word it.
            if errno == ENOENT { throw CommandFailure("\(path): no such database", exitCode: .noInput) }
            throw CommandFailure("cannot read database '\(path)': \(String(cString: strerror(errno)))", exitCode: .noInput)
        }
        do {
            return try EventStore(path: path, readOnly: !writable, create: false)
        } catch let error as StoreError {
            throw CommandFailure(error)
        }
    }

    static let dbOption = OptionSpec.option("--db", "PATH", "the database", completion: .file(["db"]))

    /// Runs `body` on the database opened for writing while this process holds its instance
    /// lock (no daemon runs on it).
    static func withWritableStore<T>(_ path: String, _ body: (EventStore) throws -> T) throws -> T {
        // A database that is not there, or no SQLite file (a directory, another file), gets
        // its error before a lock file is made beside it; the writable open migrates an older
        // schema.
        if access(path, R_OK) != 0 { _ = try openQueue(path: path, writable: false) }
        do {
            try EventStore.checkIsDatabaseFile(path: path)
        } catch let error as StoreError {
            throw CommandFailure(error)
        }
        let lock: InstanceLock
        do {
            lock = try DatabaseTrust.lock(databasePath: path, role: "maintenance")
        } catch {
            throw CommandFailure(error.message)
        }
        defer { withExtendedLifetime(lock) {} }
        return try body(try openQueue(path: path, writable: true))
    }
}

/// `geomon hooks fire`: runs the profile's hooks once with a synthetic event.
struct HooksFireCommand: GeomonCommand {
    static let spec = CommandSpec(
        "hooks fire",
        abstract: "Runs the profile's hooks for EVENT once, with a synthetic event",
        discussion: """
        Runs the profile's hooks for EVENT once, with a synthetic event at the fence
        (GEOMON_TEST=1), and prints each hook's outcome and a bounded excerpt of its output.
        Exit 0 when every hook exited 0, 1 otherwise. Nothing is stored; no retries.
        """,
        options: [
            .option("--profile", "PROFILE", "the profile whose hooks to run", completion: .file(["yaml", "yml"])),
            .choice("--event", EventKind.allCases.map(\.rawValue), "the event to fire"),
            .option("--fence", "ID", "the fence (needed for enter, exit, dwell, approach, overspeed and overspeed_end; optional for arrival and departure)"),
            .flag("--insecure-permissions", "accept group/world-writable profiles and hooks"),
        ],
        required: ["--profile", "--event"]
    )

    var profilePath: String
    var kind: EventKind
    var fence: String?
    var insecurePermissions: Bool

    init(_ arguments: ParsedArguments) throws {
        profilePath = try arguments.required("--profile")
        kind = EventKind(rawValue: try arguments.required("--event")) ?? .enter
        fence = arguments.value("--fence")
        insecurePermissions = arguments.flag("--insecure-permissions")
    }

    func run() throws -> Int32 {
        let profile = try loadProfileOrExit(profilePath, insecurePermissions: insecurePermissions)
        let event: GeoEvent
        do {
            event = try HookFire.syntheticEvent(profile: profile, kind: kind, fenceID: fence, now: WallClock.now())
        } catch let error as HookFire.FireError {
            throw UsageError(error.description)
        }
        let outcomes = HookFire.run(profile: profile, event: event, home: getenv("HOME").map { String(cString: $0) })
        if outcomes.isEmpty {
            print("no \(kind.rawValue) hooks in profile '\(profile.name)'")
            return 0
        }
        print(HookFire.render(outcomes), terminator: "")
        return outcomes.allSatisfy(\.result.succeeded) ? 0 : ExitCode.failure.code
    }
}

/// `geomon hooks list`: deliveries not yet done.
struct HooksListCommand: GeomonCommand {
    static let spec = CommandSpec(
        "hooks list",
        abstract: "Prints pending, running and retrying deliveries",
        discussion: "Prints each open delivery: the event, the hook's command, the attempt count and the last error.",
        options: [HooksCommand.dbOption],
        required: ["--db"]
    )

    var db: String

    init(_ arguments: ParsedArguments) throws {
        db = try arguments.required("--db")
    }

    func run() throws -> Int32 {
        let queue = try HooksCommand.openQueue(path: db, writable: false)
        var open: [Delivery] = []
        for status in [DeliveryStatus.pending, .running, .retrying] { open += try queue.deliveryQueue.deliveries(status: status) }
        open.sort { $0.id < $1.id }
        print(open.isEmpty ? "no pending deliveries" : DeliveryReport.render(open), terminator: open.isEmpty ? "\n" : "")
        return 0
    }
}

/// `geomon hooks dead`: dead-lettered deliveries.
struct HooksDeadCommand: GeomonCommand {
    static let spec = CommandSpec(
        "hooks dead",
        abstract: "Prints dead-lettered deliveries (every attempt failed)",
        options: [HooksCommand.dbOption],
        required: ["--db"]
    )

    var db: String

    init(_ arguments: ParsedArguments) throws {
        db = try arguments.required("--db")
    }

    func run() throws -> Int32 {
        let queue = try HooksCommand.openQueue(path: db, writable: false)
        let dead = try queue.deliveryQueue.deliveries(status: .dead)
        print(dead.isEmpty ? "no dead deliveries" : DeliveryReport.render(dead), terminator: dead.isEmpty ? "\n" : "")
        return 0
    }
}

/// `geomon hooks retry`: requeues every dead delivery.
struct HooksRetryCommand: GeomonCommand {
    static let spec = CommandSpec(
        "hooks retry",
        abstract: "Requeues every dead delivery (attempts start again from 1)",
        discussion: """
        The database has one writer. When a `geomon run` owns it (holds its instance lock), the
        command asks that daemon to requeue them (SIGUSR1 to the pid in the lock file; run it as
        the daemon's user or root): the daemon runs them at once. Otherwise it takes the lock and
        requeues them itself; the next `geomon run` or `geomon replay --db` on the database
        delivers them.
        """,
        options: [HooksCommand.dbOption],
        required: ["--db"]
    )

    var db: String

    init(_ arguments: ParsedArguments) throws {
        db = try arguments.required("--db")
    }

    func run() throws -> Int32 {
        if let (pid, role) = InstanceLock.holderAndRole(databasePath: db) {
            // Only a daemon takes the signal (a replay would die of it).
            guard role == "run" else {
                throw CommandFailure("a geomon \(role) (pid \(pid)) holds \(db); run this once it has finished", exitCode: .unavailable)
            }
            let reader = try HooksCommand.openQueue(path: db, writable: false)
            let dead = try reader.deliveryQueue.deliveries(status: .dead).count
            guard dead > 0 else {
                print("no dead deliveries")
                return 0
            }
            // The daemon requeues at once; wait (briefly) to report what it did. A daemon still
            // starting ignores the signal, so it is sent again each second until the daemon's
            // status says it runs (its handler is then installed): once more would run the
            // requeued hooks again.
            let deadline = ContinuousClock.now + .seconds(5)
            var left = dead
            var nextSignal = ContinuousClock.now
            var handled = false
            while left == dead, ContinuousClock.now < deadline {
                if !handled, ContinuousClock.now >= nextSignal {
                    let status = (try? reader.daemonStatus.read()) ?? nil
                    handled = status.map { $0.running && $0.pid == pid } ?? false
                    guard kill(pid, SIGUSR1) == 0 else {
                        throw CommandFailure("cannot ask the running geomon (pid \(pid)) to requeue: \(String(cString: strerror(errno))); run this as its user or root")
                    }
                    nextSignal = ContinuousClock.now + .seconds(1)
                }
                usleep(50_000)
                left = try HooksCommand.openQueue(path: db, writable: false).deliveryQueue.deliveries(status: .dead).count
            }
            guard left < dead || handled else {
                print("asked the running geomon (pid \(pid)) to requeue \(dead) dead \(dead == 1 ? "delivery" : "deliveries"); none requeued yet")
                return ExitCode.failure.code
            }
            print("asked the running geomon (pid \(pid)) to requeue \(dead) dead \(dead == 1 ? "delivery" : "deliveries"); it runs them now")
            return 0
        }
        let count = try HooksCommand.withWritableStore(db) { try $0.deliveryQueue.requeueDead() }
        print("requeued \(count) dead \(count == 1 ? "delivery" : "deliveries")")
        return 0
    }
}
