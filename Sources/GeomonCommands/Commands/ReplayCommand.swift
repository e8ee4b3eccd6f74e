import FoundationEssentials
import GeomonCore
import GeomonDaemon
import GeomonEvaluation
import GeomonFormat
import GeomonHooks
import GeomonSources
import GeomonStore
#if canImport(Glibc)
import Glibc
#endif

/// `geomon replay`: the driver on a virtual clock over recorded tracks.
struct ReplayCommand: GeomonCommand {
    static let spec = CommandSpec(
        "replay",
        abstract: "Runs the monitor on recorded tracks with a virtual clock",
        discussion: """
        Runs the same decision machine as `geomon run` on recorded tracks (NMEA, GPX, JSON lines,
        gpsd JSON), on a virtual clock driven by the track's timestamps, and prints each event
        on its own line. The profile's power policy decides when the GNSS receiver is on; the
        receiver model then delivers only the fixes a real receiver would have produced: the
        recording starts with the receiver on and its first fix in hand, a wake-up gives its
        first fix after the time to first fix, nothing comes while it is off (docs/power.md,
        "Receiver model"). "Fixes used" in the summary are the recorded fixes the receiver model
        delivered; the others came while the modelled receiver was off or acquiring (a note
        says how many; `--always-on` uses every one). An energy summary goes to stderr at the end.

        A track in which no line, sentence or point is a usable fix exits 65 naming the file and
        why its input was skipped.

        A database write failure (disk full, read-only file system, I/O error) exits 1 with
        'geomon: error: DB: cannot write the database: REASON'; nothing after the last commit is
        stored, and the same command resumes once the cause is fixed.
        """,
        options: [
            .option("--profile", "PROFILE", "the profile to run", completion: .file(["yaml", "yml"])),
            .option("--db", "PATH", "database to use; replaying into an existing one resumes after its last committed fix (default: a temporary database, removed after; `:memory:` keeps it in memory)", completion: .file(["db"])),
            .choice("--format", ["text", "json"], "events as text (default) or json (one object per line)"),
            .option("--speed", "X", "play X times real time, 0.001 to 1000000 (default: as fast as possible)"),
            .flag("--no-hooks", "store events without queueing hook deliveries"),
            .flag("--publish", "send the replay's MQTT messages to the profile's broker (publish.mqtt; off by default): with --speed while the replay runs, then until the broker acknowledged every one; exits 69 when it makes no progress for --publish-wait (docs/publish.md)"),
            .option("--publish-wait", "SECONDS", "with --publish: how long to wait for a broker that makes no progress before giving up (default 30)"),
            .flag("--insecure-permissions", "accept group/world-writable profiles, GeoJSON files, programs and database files (and, as root, ones owned by other users)"),
            .flag("--stats", "print per track the fixes read and the input skipped by reason, then fixes processed, index lookups and the loop's throughput, to stderr"),
            .flag("--always-on", "keep the receiver on (every recorded fix is delivered, and between them one every --tracking-interval)"),
            .flag("--compare-always-on", "also run always-on and compare: the report gains `baseline`, `match` (recall, extra, latency p50/p95) and the `oracle` bound"),
            .option("--coarse", "FILE", "a recorded coarse track (any track format); default: derived from the track every sources.coarse.interval, seeded (--seed)", completion: .file([])),
            .option("--seed", "N", "seed of the derived coarse fixes (default 1)"),
            .option("--report", "FILE", "write the energy report (`-`: stdout, after the events): the readable table with --format text (the default), one JSON object with --format json", completion: .file(["json"])),
            .option("--svg", "FILE", "draw the run: map and timeline (docs/pictures.md)", completion: .file(["svg"])),
            .option("--policy-log", "FILE", "every policy action with its time and reason, and every GNSS fix the receiver delivered, one per line", completion: .file([])),
            .option("--activity", "KIND|derive|FILE", "what carries the device: foot, bicycle, vehicle, boat, air, any (instead of the profile's policy.activity); derive: sensed from the recording's speeds, each change reported the motion source's latency late (sources.motion.latency, default 10 s; docs/power.md, \"The latency argument\"); or a FILE of what a motion source said, its JSON lines with their times ({\"time\": RFC 3339, \"activity\": KIND})", completion: .file(["jsonl", "json"])),
            .option("--power-supply", "FILE", "the power supply over the recording, for profiles with modes: JSON lines {\"time\": RFC 3339, \"capacity\": 0-100, \"online\": true|false}, each reading handed to the machine at its time (docs/engine.md, \"Modes\")", completion: .file(["jsonl", "json"])),
            .flag("--motion", "derive a motion sensor from the recording (still where the recorded speed stays under 0.5 m/s for sources.motion.still_after, default 60 s; moving 2.5 s after the last slow fix before it rises): the receiver stays off while still (docs/power.md, \"Wake on motion\"); a profile with sources.motion gets it anyway"),
            .option("--interpolate-gaps", "SECONDS", "the receiver model bridges recorded gaps up to this long by interpolation; a longer gap is an outage, for --compare-always-on too (default 60)"),
            .option("--receiver-ttff-hot", "SECONDS", "the modelled receiver's time to first fix after a wake within hot_window (default: the profile's ttff_hot): a receiver faster or slower than the profile plans, as the policy measures it (docs/power.md, \"The time to first fix, measured\"); the oracle's hot starts take it too; a restart class other than hot (sources.gnss.restart) makes every wake warm or cold, and this changes nothing"),
            .option("--tracking-interval", "SECONDS", "while on, the modelled receiver delivers a fix at least this often, interpolated between recorded fixes at most --interpolate-gaps apart, as a receiver tracking at 1 Hz does; for --always-on and --compare-always-on too; 0: the recorded fixes only (default 1)"),
        ],
        arguments: [ArgumentSpec("TRACK", "recorded tracks (their fixes are merged by time)", arity: .many, completion: .file([]))],
        required: ["--profile"]
    )

    var profilePath: String
    var trackPaths: [String]
    var db: String?
    var json: Bool
    var speed: Double?
    var noHooks: Bool
    var publish: Bool
    var publishWait: Duration = .seconds(30)
    var insecurePermissions: Bool
    var stats: Bool
    var options = ReplayRun.Options()
    var coarsePath: String?
    var activityPath: String?
    var powerSupplyPath: String?
    var reportPath: String?
    var svgPath: String?
    var policyLogPath: String?

    init(_ arguments: ParsedArguments) throws {
        profilePath = try arguments.required("--profile")
        trackPaths = arguments.positionals
        db = arguments.value("--db")
        json = arguments.choice("--format", default: "text") == "json"
        speed = try arguments.double("--speed", in: 0.001...1_000_000)
        noHooks = arguments.flag("--no-hooks")
        publish = arguments.flag("--publish")
        if let wait = try arguments.double("--publish-wait", in: 0...86_400) { publishWait = .milliseconds(Int64((wait * 1000).rounded())) }
        if arguments.has("--publish-wait"), !publish { throw UsageError("option '--publish-wait' belongs to --publish") }
        insecurePermissions = arguments.flag("--insecure-permissions")
        stats = arguments.flag("--stats")
        options.alwaysOn = arguments.flag("--always-on")
        options.compareAlwaysOn = arguments.flag("--compare-always-on")
        options.motion = arguments.flag("--motion")
        activityPath = nil
        if let text = arguments.value("--activity") {
            if text == "derive" {
                options.activity = .derive
            } else if let activity = Activity(rawValue: text) {
                options.activity = .declared(activity)
            } else {
                activityPath = text
            }
        }
        coarsePath = arguments.value("--coarse")
        powerSupplyPath = arguments.value("--power-supply")
        if let seed = try arguments.int("--seed", in: 0...Int.max) { options.seed = UInt64(seed) }
        reportPath = arguments.value("--report")
        svgPath = arguments.value("--svg")
        policyLogPath = arguments.value("--policy-log")
        if let gap = try arguments.double("--interpolate-gaps", in: 0...86_400) {
            options.interpolationMaxGap = .milliseconds(Int64((gap * 1000).rounded()))
        }
        if let hot = try arguments.double("--receiver-ttff-hot", in: 0.001...600) {
            options.receiverTTFFHot = .milliseconds(Int64((hot * 1000).rounded()))
        }
        if let interval = try arguments.double("--tracking-interval", in: 0...3600) {
            if interval > 0, interval < 0.001 {
                throw UsageError("option '--tracking-interval' must be 0 (the recorded fixes only) or at least 0.001 (got \(NumberText.shortest(interval)))")
            }
            options.trackingInterval = interval > 0 ? .milliseconds(Int64((interval * 1000).rounded())) : nil
        }
    }

    func validate() throws {
        // A word that is no activity and no file there: a mistyped activity, not missing input.
        if let activityPath, !activityPath.contains("/"), !activityPath.contains("."), access(activityPath, F_OK) != 0 {
            let kinds = Activity.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("option '--activity' must be \(kinds), derive or a recording (got '\(activityPath)')")
        }
        if options.alwaysOn, options.compareAlwaysOn {
            throw UsageError("'--always-on' and '--compare-always-on' exclude each other")
        }
        try OutputPaths.check(outputs: [("--report", reportPath == "-" ? nil : reportPath), ("--svg", svgPath), ("--policy-log", policyLogPath)],
                              inputs: [("--profile", profilePath), ("--db", db), ("--coarse", coarsePath), ("--activity", activityPath),
                                       ("--power-supply", powerSupplyPath)] + trackPaths.map { ("TRACK", $0) })
    }

    func run() throws -> Int32 {
        let profile = try loadProfileOrExit(profilePath, insecurePermissions: insecurePermissions)
        // Paced, the recording is read into memory first: reading stays outside the pace.
        let (recording, tracks, rereading) = try Self.recording(trackPaths, inMemory: speed != nil)
        var options = options
        let coarseTrack = try coarsePath.map(Self.readTrack)
        if let coarseTrack { options.coarse = coarseTrack.fixes }
        if let activityPath { options.activity = .recorded(try Self.readActivities(activityPath)) }
        if let powerSupplyPath { options.supplies = try Self.readSupplies(powerSupplyPath) }
        let run = ReplayRun(profile: profile, recording: recording, options: options)
        run.keepsDelivered = policyLogPath != nil
        run.keepsActions = policyLogPath != nil || svgPath != nil
        run.keepsEvents = svgPath != nil

        var temporaryDirectory: String?
        defer { if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) } }
        let database = try openDatabase(profile: profile, temporaryDirectory: &temporaryDirectory)
        defer { withExtendedLifetime(database.lock) {} }
        let (store, journal, dbPath) = (database.store, database.journal, database.path)
        let (services, hooks, publishing) = try makeServices(profile: profile, store: store, journal: journal)
        let progressBar = isatty(2) == 1 && run.recording.count >= 5000 ? ProgressBar() : nil
        let resumeAfter = journal.lastCommittedFixTime
        var counts = (processed: 0, notNewer: 0, stored: 0, events: 0)
        let clock = ContinuousClock()
        let started = clock.now
        let cpuStarted = Bench.seconds()
        do {
            try run.run(journal: journal, services: services, speed: speed) { driver, source in
                driver.silentThrough = resumeAfter
                // Paced and publishing: commits (and so messages) at `geomon run`'s cadence on
                // the replay's clock, not in batches timed by the host's.
                driver.commit(at: publishing != nil && speed != nil ? .live : .replay)
                driver.onCommitted = { events, _ in counts.events += events.count }
                driver.onEffect = { effect, _ in
                    switch effect {
                    case let .commit(commit): counts.processed += commit.fixes.count
                    case .dropped(_, .notNewer): counts.notNewer += 1
                    default: break
                    }
                }
                source.onFix = { fix in
                    if let progressBar { progressBar.update(at: fix.time, from: run.start, to: run.end) }
                    if let resumeAfter, fix.time <= resumeAfter { counts.stored += 1 }
                }
            }
        } catch let error as SQLiteError {
            progressBar?.finish()
            throw CommandFailure(DatabaseTrust.writeFailure(path: dbPath, error))
        }
        if let problem = rereading.problem { throw CommandFailure(problem, exitCode: .noInput) }
        let elapsed = (clock.now - started).secondsValue
        let cpu = Bench.seconds() - cpuStarted
        progressBar?.update(percent: 100, "\(run.recording.count) fixes")
        progressBar?.finish()
        try reportDeliveries(store: store, hooks: hooks, publishing: publishing)
        try writeOutputs(run, profile: profile, notNewer: counts.notNewer)
        if let db, let resumeAfter, counts.processed == 0, counts.events == 0 {
            writeStderr("replay: note: nothing new was decided: \(db) already holds this replay up to \(resumeAfter.rfc3339) (a replay into a database resumes after its last committed fix; the figures above are the whole run's)")
        }
        if stats {
            let coarse = coarseTrack.map { [TrackSummary(path: $0.path, format: $0.format, count: $0.fixes.count, skippedText: $0.skippedText)] }
            printStats(run, tracks: tracks + (coarse ?? []), counts: counts, elapsed: elapsed, cpu: cpu, journal: journal)
        }
        return 0
    }

    /// What became of the hook deliveries and the MQTT messages; a replay with `--publish` fails
    /// while the broker has not acknowledged every message.
    private func reportDeliveries(store: EventStore, hooks: HookService?, publishing: MQTTService?) throws {
        if hooks != nil {
            let dead = try store.deliveryQueue.deliveries(status: .dead).count
            if dead > 0 {
                let where_ = db.map { "see 'geomon hooks dead --db \($0)'" } ?? "the temporary database is removed; use --db to keep them"
                writeStderr("geomon: warning: \(dead) hook \(dead == 1 ? "delivery" : "deliveries") dead-lettered (\(where_))")
            }
        }
        if let publishing {
            let pending = try store.outbox.pendingPublicationCount()
            if pending > 0 {
                let kept = db.map { "they stay in \($0); replaying into it again with --publish sends them" } ?? "the temporary database is removed with them"
                throw CommandFailure("publish: \(pending) messages not acknowledged by the broker (\(publishing.lastError ?? "no progress for \(NumberText.short(publishWait.secondsValue, 1)) s")); \(kept)", exitCode: .unavailable)
            }
            writeStderr("publish: \(publishing.publishedCount) messages acknowledged by the broker")
        }
    }

    /// The report, picture, policy log and summary lines the options ask for.
    private func writeOutputs(_ run: ReplayRun, profile: Profile, notNewer: Int) throws {
        if let reportPath {
            let text = json ? ReplayReport.json(run) : ReplayReport.table(run)
            if reportPath == "-" {
                print(text, terminator: "")
                fflush(nil)
            } else {
                try writeFile(text, to: reportPath)
            }
        }
        if let svgPath {
            let title = "geomon replay · \(profile.name) · \(trackPaths.joined(separator: " "))"
            try writeFile(ReplayPicture.svg(run, title: title), to: svgPath)
        }
        if let policyLogPath { try writeFile(ReplayReport.policyLog(run), to: policyLogPath) }
        writeStderr(ReplayReport.summaryLine(run))
        if let note = ReplayReport.withheldNote(run, notNewer: notNewer) { writeStderr(note) }
        if let note = ReplayReport.accuracyNote(run) { writeStderr(note) }
    }

    /// `--stats`: what was read, what was processed, how fast, the index's work.
    private func printStats(_ run: ReplayRun, tracks: [TrackSummary], counts: (processed: Int, notNewer: Int, stored: Int, events: Int),
                            elapsed: Double, cpu: Double, journal: Journal) {
        for track in tracks {
            writeStderr("replay: \(track.path) (\(track.format)): \(track.count) fixes read, \(track.skippedText)")
        }
        let rate = elapsed > 0 ? Int((Double(counts.processed) / elapsed).rounded()) : 0
        let cpuRate = cpu > 0 ? Int((Double(counts.processed) / cpu).rounded()) : 0
        let lookups = run.lookups
        let perFix = lookups.fixes > 0 ? Double(lookups.probes) / Double(lookups.fixes) : 0
        let held = run.source?.receiver.held ?? 0
        writeStderr("replay: \(counts.processed) fixes processed, \(counts.stored) already stored, \(counts.notNewer) not newer than the last, \(held) held as implausible jumps, \(counts.events) events in "
                    + "\(Int((elapsed * 1000).rounded())) ms wall (\(rate) fixes/s), \(Int((cpu * 1000).rounded())) ms CPU "
                    + "(\(cpuRate) fixes/s), db \(db ?? "temporary file"); index: \(lookups.probes) probes for "
                    + "\(lookups.fixes) fixes (\(NumberText.fixed(perFix, 3)) per fix), \(lookups.courseSamples) course samples")
        let storeMs = Double(journal.commitMicroseconds) / 1000
        let share = elapsed > 0 ? storeMs / (elapsed * 1000) * 100 : 0
        writeStderr("replay: store: \(journal.commits) transactions, \(NumberText.fixed(storeMs, 1)) ms committing (\(NumberText.fixed(share, 1)) % of the loop's wall time)")
        writeStderr("replay: reading: one pass, at most \(run.mostHeld) recorded fixes held between its readers")
    }

    /// The database a replay writes: `--db`, or a temporary file; trusted, locked, migrated.
    private func openDatabase(profile: Profile, temporaryDirectory: inout String?)
        throws -> (path: String, lock: InstanceLock?, store: EventStore, journal: Journal) {
        let dbPath: String
        if let db {
            dbPath = db
        } else {
            let dir = try makeTemporaryDirectory(prefix: "geomon-replay")
            temporaryDirectory = dir
            dbPath = dir + "/replay.db"
        }
        do {
            try EventStore.checkIsNoOtherFile(path: dbPath)
        } catch let error as StoreError {
            throw CommandFailure(error)
        }
        if let problem = DatabaseTrust.problem(path: dbPath, insecurePermissions: insecurePermissions) {
            throw CommandFailure(problem)
        }
        if let exposure = DatabaseTrust.exposure(path: dbPath) { writeStderr("geomon: warning: \(exposure)") }
        // One writer per database: the same instance lock as `geomon run`.
        var lock: InstanceLock?
        if dbPath != ":memory:" {
            do {
                lock = try DatabaseTrust.lock(databasePath: dbPath, role: "replay")
            } catch {
                // A --db in a directory that does not exist is input missing (66).
                let missing = !error.busy && !FileManager.default.fileExists(atPath: directoryPart(of: dbPath))
                throw CommandFailure(error.message, exitCode: missing ? .noInput : .failure)
            }
        }
        let store: EventStore
        let journal: Journal
        do {
            store = try EventStore(path: dbPath)
            var outboxes: [any OutboxContributor] = noHooks ? [] : [HookOutbox(profile: profile)]
            if publish { outboxes.append(OwnTracksOutbox(profile: profile, store: store)) }
            journal = try Journal(profile: profile, store: store, outboxes: outboxes)
        } catch let error as StoreError {
            throw CommandFailure(error)
        } catch let error as JournalError {
            throw CommandFailure("\(error)", exitCode: .dataError)
        } catch let error as SQLiteError {
            throw CommandFailure(DatabaseTrust.writeFailure(path: dbPath, error))
        }
        return (dbPath, lock, store, journal)
    }

    /// The services beside the receiver model: printing, hooks (unless `--no-hooks`), MQTT
    /// (with `--publish`) — the same ones `geomon run` has.
    private func makeServices(profile: Profile, store: EventStore, journal: Journal)
        throws -> (services: [any Service], hooks: HookService?, publishing: MQTTService?) {
        // Without hooks and without pacing nothing acts on an event before its batch commits,
        // so events ride with their batch (they are still printed only after the commit).
        journal.commitEventsImmediately = !noHooks || speed != nil
        var services: [any Service] = [EventReporter(output: json ? .json : .text, log: nil)]
        var hooks: HookService?
        if !noHooks {
            let completions = try CompletionService()
            services.append(completions)
            let service = HookService(profile: profile, store: store, completions: completions, environment: ProcessInfo.processInfo.environment,
                                      conditionRecheck: .seconds(1))
            service.onOutcome = { outcome in
                let what = "hook \(JSON.array(outcome.delivery.argv)) for \(outcome.delivery.event.kind.rawValue) \(outcome.delivery.eventID)"
                switch outcome.decision {
                case .delivered: break
                case let .retry(at): writeStderr("geomon: \(what): attempt \(outcome.attempt) failed (\(outcome.result.summary)); retry at \(at.rfc3339)")
                case .dead: writeStderr("geomon: \(what): attempt \(outcome.attempt) failed (\(outcome.result.summary)); dead-lettered")
                case .interrupted: writeStderr("geomon: \(what): attempt \(outcome.attempt) stopped with geomon; it runs again when the replay resumes this database")
                }
            }
            service.onHeldBack = { count in
                writeStderr("geomon: hooks: \(count) \(count == 1 ? "delivery waits" : "deliveries wait") for their conditions (network/external power)")
            }
            services.append(service)
            hooks = service
        }
        var publishing: MQTTService?
        if publish {
            guard profile.publish.mqtt != nil else {
                throw CommandFailure("--publish: the profile '\(profile.name)' has no 'publish.mqtt' section (docs/publish.md)", exitCode: .usage)
            }
            guard let outbox = journal.outboxes.lazy.compactMap({ $0 as? OwnTracksOutbox }).first else {
                throw CommandFailure("--publish: the journal writes no MQTT messages")
            }
            let service = MQTTService(profile: profile, store: store, outbox: outbox,
                                      log: Log(level: .warning, journald: false, sink: { writeStderr("publish: \($0)") }),
                                      powerSupply: nil, waypointsAtStart: journal.lastCommittedFixTime == nil)
            service.patience = publishWait
            services.append(service)
            publishing = service
        }
        return (services, hooks, publishing)
    }
}

/// What `--stats` says of a track read.
struct TrackSummary {
    var path: String
    var format: String
    var count: Int
    var skippedText: String
}

/// The first problem met re-reading the tracks during the run (a file removed or changed).
final class RereadProblem {
    var problem: String?
}

extension ReplayCommand {
    /// The recording of `paths`, in their order. Each file is read through once first (its
    /// fixes counted, its skipped input and time order checked). When every file is a regular
    /// file in time order and each begins where the one before ended, the run reads the files
    /// again as it goes (`TrackStream`), so memory does not grow with the recording; otherwise
    /// (input out of order, or a pipe, which can be read only once) the fixes are held in
    /// memory and sorted by time; so it is with `inMemory` (a paced replay).
    static func recording(_ paths: [String], inMemory: Bool = false) throws -> (Recording, [TrackSummary], RereadProblem) {
        var summaries: [TrackSummary] = []
        var start: UTCTime?, end: UTCTime?
        var count = 0
        var streamable = !inMemory
        // Each file's fixes when it cannot be read again (nil: read it again when needed).
        var held: [[Fix]?] = []
        for path in paths {
            var stream: TrackStream
            do {
                stream = try TrackStream(path: path)
            } catch {
                throw CommandFailure("\(error)", exitCode: error.isMissing ? .noInput : .dataError)
            }
            var kept: [Fix]? = stream.isRegularFile && !inMemory ? nil : []
            if !stream.isRegularFile { streamable = false }
            var fileCount = 0
            var last: UTCTime?
            while let fix = stream.next() {
                if let last, fix.time < last { streamable = false }
                if fileCount == 0, let end, fix.time < end { streamable = false }
                if start == nil { start = fix.time }
                last = fix.time
                fileCount += 1
                kept?.append(fix)
            }
            if let problem = stream.readError {
                throw CommandFailure("\(path): cannot read file (\(problem))", exitCode: .noInput)
            }
            let track = Track(path: path, format: stream.format.rawValue, fixes: [], skipped: stream.skipped)
            guard let last else { throw CommandFailure("\(track.noFixError!)", exitCode: .dataError) }
            summaries.append(TrackSummary(path: path, format: track.format, count: fileCount, skippedText: track.skippedText))
            end = max(end ?? last, last)
            count += fileCount
            held.append(kept)
        }
        let rereading = RereadProblem()
        guard streamable else {
            var fixes: [Fix] = []
            for (path, kept) in zip(paths, held) { fixes += try kept ?? readTrack(path).fixes }
            return (Recording(fixes: fixes), summaries, rereading)
        }
        let recording = Recording(start: start, end: end, count: count) {
            var remaining = paths[...]
            var current: TrackStream?
            return FixFeed {
                while true {
                    if let fix = current?.next() { return fix }
                    if let done = current, let problem = done.readError, rereading.problem == nil {
                        rereading.problem = "\(done.path): cannot read file (\(problem))"
                    }
                    guard let path = remaining.popFirst() else { return nil }
                    do {
                        current = try TrackStream(path: path)
                    } catch {
                        if rereading.problem == nil { rereading.problem = "\(error) (it changed while being replayed)" }
                        current = nil
                    }
                }
            }
        }
        return (recording, summaries, rereading)
    }

    /// A track, or exit 66 (missing) / 65 (not a track, or no usable fix in it).
    /// `--activity FILE`: a motion source's lines with their times (`{"time": …, "activity": …}`),
    /// the activity changes in time order. A line without a time, or one geomon cannot read, is
    /// an error naming it.
    static func readActivities(_ path: String) throws -> [ActivitySignal.Change] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("option '--activity': '\(path)' is no activity (\((Activity.allCases.map(\.rawValue) + ["derive"]).joined(separator: ", "))) and no readable file", exitCode: .noInput)
        }
        var parser = MotionLinesParser()
        let words = parser.feed(Array(data)) + parser.finish()
        if let error = parser.lastError { throw CommandFailure("\(path): \(error)", exitCode: .dataError) }
        var changes: [ActivitySignal.Change] = []
        for word in words {
            guard let activity = word.activity else { continue }
            guard let time = word.time else { throw CommandFailure("\(path): every line needs its \"time\" (RFC 3339)", exitCode: .dataError) }
            changes.append(ActivitySignal.Change(time: time, activity: activity))
        }
        return changes.sorted { $0.time < $1.time }
    }

    /// `--power-supply FILE`: the supply's readings in time order. A line geomon cannot read
    /// is an error naming it.
    static func readSupplies(_ path: String) throws -> [(time: UTCTime, reading: PowerSupplyReading)] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("option '--power-supply': cannot read '\(path)'", exitCode: .noInput)
        }
        var parser = PowerSupplyLinesParser()
        let readings = parser.feed(Array(data)) + parser.finish()
        if let error = parser.lastError { throw CommandFailure("\(path): \(error)", exitCode: .dataError) }
        return readings.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    static func readTrack(_ path: String) throws -> Track {
        let track: Track
        do {
            track = try TrackReader.read(path: path)
        } catch {
            throw CommandFailure("\(error)", exitCode: error.isMissing ? .noInput : .dataError)
        }
        if let error = track.noFixError { throw CommandFailure("\(error)", exitCode: .dataError) }
        return track
    }
}

/// A one-line progress bar on stderr (only used when stderr is a terminal): how far into the
/// recording's time the replay is.
final class ProgressBar {
    private var lastPercent = -1

    /// The replay has reached `time` of the recording from `start` to `end`.
    func update(at time: UTCTime, from start: UTCTime?, to end: UTCTime?) {
        guard let start, let end, end > start else { return }
        let percent = Int(max(0, min(100, 100 * (time - start).secondsValue / (end - start).secondsValue)))
        guard percent != lastPercent else { return }
        update(percent: percent, time.rfc3339)
    }

    func update(percent: Int, _ text: String) {
        lastPercent = percent
        let filled = percent * 30 / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
        writeStderrRaw("\r[\(bar)] \(percent)% of the recording, \(text)")
    }

    func finish() {
        writeStderrRaw("\r\u{1B}[K")
    }

    private func writeStderrRaw(_ text: String) {
        _ = text.withCString { write(2, $0, strlen($0)) }
    }
}
