import GeomonConfig
import GeomonCore
import GeomonDaemon
import GeomonFormat
import GeomonStore
import GeomonSystem

#if canImport(Glibc)
import Glibc
#endif

/// `geomon fences here ID --radius 40m --db DB`: the anchor watch (docs/running.md).
struct FencesHereCommand: GeomonCommand {
    static let spec = CommandSpec(
        "fences here",
        abstract: "Places a circle fence where the device stands now",
        discussion: """
        Places a circle of --radius (default 50m) around the device's current position: the mean
        of the last fixes the database holds while the device stood still (from the newest back
        over at most 5 min, each within both accuracies of the newest and not reporting a speed
        of 1 m/s or more). The fence is stored in the database (replacing a placed fence with the
        same id), listed by `geomon fences --db` with where it came from, and monitored by the
        geomon that runs on the database at once (it is asked to reload, as with SIGHUP) and by
        every later run, with or without MQTT. A boat's anchor alarm: place `anchor` where the
        anchor dropped, and give `hooks.exit` a program that sounds the alarm. The fence
        reports enter and exit; `geomon fences remove ID` removes it (an exit is reported if the
        device is inside). The id of a fence of the profile the run watches is refused.
        """,
        options: [
            .option("--db", "PATH", "the database of the run to watch with", completion: .file(["db"])),
            .option("--radius", "DIST", "the circle's radius (metres, or with a unit: 40m, 0.2km; default 50m)"),
            .option("--name", "NAME", "the fence's name (default: none; events and lists name it by its id)"),
        ],
        arguments: [ArgumentSpec("ID", "the fence id")],
        required: ["--db"]
    )

    var db: String
    var id: String
    var radius: Double
    var name: String?

    init(_ arguments: ParsedArguments) throws {
        db = try arguments.required("--db")
        guard let id = arguments.positionals.first else { throw UsageError("missing the fence ID (geomon fences here ID --db PATH)") }
        if let problem = FenceIDRule.problem(id) { throw UsageError("the fence id \(problem)") }
        self.id = id
        name = arguments.value("--name")
        radius = 50
        if let text = arguments.value("--radius") {
            guard let meters = DistanceText.meters(text), meters > 0, meters <= geometryMaxCircleRadiusMeters else {
                throw UsageError("option '--radius' must be a distance such as 40m or 0.2km, above 0 and at most \(Int(geometryMaxCircleRadiusMeters / 1000)) km (got '\(text)')")
            }
            radius = meters
        }
    }

    func run() throws -> Int32 {
        let store = try HooksCommand.openQueue(path: db, writable: true)
        // A profile fence with this id would hide it: the run would not monitor it.
        if try store.daemonStatus.read()?.profileFences.contains(id) == true {
            throw CommandFailure("'\(id)' is the id of a fence of the profile the run watches; a placed fence needs an id of its own "
                                 + "(it would not be monitored)", exitCode: .dataError)
        }
        guard let found = try AnchorPosition.find(in: store) else {
            throw CommandFailure("\(db) holds no fix yet: start `geomon run` and wait for a fix, then place the fence", exitCode: .noInput)
        }
        let now = WallClock.now()
        let fence = PlacedFence(fenceID: id, name: name, center: found.center, radiusMeters: radius, placedAt: now, placedBy: "geomon fences here")
        try store.placedFenceList.upsert(fence)
        let age = (now - found.last.time).secondsValue
        print("placed \(id): a \(NumberText.short(radius, 1)) m circle at \(NumberText.short(found.center.latitude, 7)),\(NumberText.short(found.center.longitude, 7))"
              + " (the mean of \(found.fixes) fix\(found.fixes == 1 ? "" : "es"), the newest \(found.last.time.rfc3339))")
        if age > 600 {
            let old = age < 7200 ? "\(Int(age / 60)) min" : age < 172_800 ? "\(Int(age / 3600)) h" : "\(Int(age / 86_400)) days"
            writeStderr("geomon: warning: the newest fix is \(old) old; the fence is placed where the device was then")
        }
        return FencesRemoveCommand.notifyDaemon(db: db)
    }
}

/// `geomon fences remove ID --db DB`.
struct FencesRemoveCommand: GeomonCommand {
    static let spec = CommandSpec(
        "fences remove",
        abstract: "Removes a fence placed with `geomon fences here`",
        discussion: """
        Removes the placed fence ID from the database; the geomon that runs on it reloads at
        once, and reports the exit if the device was inside it (consumers are never left
        inside). Exit 66 when the database has no placed fence with that id.
        """,
        options: [.option("--db", "PATH", "the database", completion: .file(["db"]))],
        arguments: [ArgumentSpec("ID", "the fence id")],
        required: ["--db"]
    )

    var db: String
    var id: String

    init(_ arguments: ParsedArguments) throws {
        db = try arguments.required("--db")
        guard let id = arguments.positionals.first else { throw UsageError("missing the fence ID (geomon fences remove ID --db PATH)") }
        self.id = id
    }

    func run() throws -> Int32 {
        let store = try HooksCommand.openQueue(path: db, writable: true)
        guard try store.placedFenceList.delete(fenceID: id) else {
            let placed = try store.placedFenceList.all().map(\.fenceID)
            throw CommandFailure("\(db) has no placed fence '\(id)'" + (placed.isEmpty ? "" : " (placed: \(placed.joined(separator: ", ")))"), exitCode: .noInput)
        }
        print("removed \(id)")
        return Self.notifyDaemon(db: db)
    }

    /// Asks the geomon running on `db` to reload (SIGHUP); says so, or that the next run will
    /// pick the change up.
    static func notifyDaemon(db: String) -> Int32 {
        guard let (pid, role) = InstanceLock.holderAndRole(databasePath: db) else {
            print("no geomon runs on \(db); the next `geomon run` monitors the change")
            return 0
        }
        guard role == "run" else {
            print("a geomon \(role) (pid \(pid)) holds \(db) and does not take changes; the next `geomon run` monitors it")
            return 0
        }
        guard kill(pid, SIGHUP) == 0 else {
            writeStderr("geomon: error: cannot ask the running geomon (pid \(pid)) to reload: \(String(cString: strerror(errno))); run this as its user or root, or send it SIGHUP")
            return ExitCode.failure.code
        }
        print("asked the running geomon (pid \(pid)) to reload: it monitors the change now")
        return 0
    }
}
