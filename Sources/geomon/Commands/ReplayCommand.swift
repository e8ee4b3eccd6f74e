import Foundation
import GeomonCore
import GeomonDaemon
import GeomonSources
import GeomonStore
#if canImport(Glibc)
import Glibc
#endif

/// `geomon replay`: Runs the engine on recorded tracks with a virtual clock.
enum ReplayCommand: Command {
    static let name = "replay"
    static let summary = "Runs the engine on recorded tracks with a virtual clock"
    static let help = """
    usage: geomon replay --profile PROFILE TRACK… [--db PATH] [--format text|json] [--speed X] [--no-hooks]
                 [--always-on | --compare-always-on] [--coarse FILE] [--report FILE] [--svg FILE]
                 [--interpolate-gaps S] [--stats]

    Runs the whole engine on recorded tracks (NMEA, GPX, JSON lines, gpsd JSON) on a virtual
    clock driven by the track's timestamps and prints each event on its own line. The profile's
    power policy decides when the GNSS receiver is on; while it is off no fixes are delivered
    (docs/power.md, "Receiver model"). An energy summary goes to stderr at the end.

    options:
      --profile PROFILE   the profile to run (required)
      --db PATH           database to use; replaying into an existing one resumes after its
                          last committed fix (default: a temporary database, removed after)
      --format FORMAT     text (default) or json (one object per line)
      --speed X           play X times real time (default: as fast as possible)
      --no-hooks          store events without queueing hook deliveries
      --insecure-permissions
                          accept group/world-writable profiles, GeoJSON files, programs and
                          database files (and, as root, ones owned by other users)
      --stats             print fixes processed and the loop's throughput to stderr
                          (`--db :memory:` keeps the database in memory, for comparison)
    \(ReplayPowerOptions.help)

    A database write failure (disk full, read-only file system, I/O error) exits 1 with
    'geomon: error: DB: cannot write the database: REASON'; nothing after the last commit is
    stored, and the same command resumes once the cause is fixed.
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        guard let profilePath = try arguments.option("--profile") else { throw UsageError("missing '--profile PROFILE'") }
        let dbOption = try arguments.option("--db")
        let json = try arguments.choice("--format", ["text", "json"], default: "text") == "json"
        let speed = try arguments.doubleOption("--speed")
        if let speed, speed <= 0 { throw UsageError("option '--speed' must be greater than 0 (got \(speed))") }
        let noHooks = arguments.flag("--no-hooks")
        let stats = arguments.flag("--stats")
        let insecurePermissions = arguments.flag("--insecure-permissions")
        let power = try ReplayPowerOptions.parse(&arguments) // power policy (issue 6/9)
        let trackPaths = try arguments.positionals()
        guard !trackPaths.isEmpty else { throw UsageError("missing TRACK") }

        let profile = try loadProfileOrExit(profilePath, insecurePermissions: insecurePermissions)
        var fixes: [Fix] = []
        for path in trackPaths {
            do {
                let track = try TrackReader.read(path: path)
                fixes.append(contentsOf: track.fixes)
            } catch {
                writeStderr("geomon: error: \(error)")
                return error.isMissing ? ExitCode.noInput.code : ExitCode.dataError.code
            }
        }

        let powered: ReplayPower // power policy: the fixes the receiver delivers
        switch power.prepare(profile: profile, fixes: fixes) {
        case let .success(run): powered = run
        case let .failure(exit): return exit.code
        }

        var temporaryDirectory: String?
        defer { if let temporaryDirectory { try? FileManager.default.removeItem(atPath: temporaryDirectory) } }
        let dbPath: String
        if let dbOption {
            dbPath = dbOption
        } else {
            let dir = NSTemporaryDirectory() + "geomon-replay-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            temporaryDirectory = dir
            dbPath = dir + "/replay.db"
        }
        if let problem = DatabaseTrust.problem(path: dbPath, insecurePermissions: insecurePermissions) {
            writeStderr("geomon: error: \(problem)")
            return ExitCode.failure.code
        }
        let store: EventStore
        do {
            store = try EventStore(path: dbPath)
        } catch let error as StoreError {
            writeStderr("geomon: error: \(error)")
            return error.kind == .missing ? ExitCode.noInput.code : ExitCode.dataError.code
        } catch let error as SQLiteError {
            writeStderr("geomon: error: \(DatabaseTrust.writeFailure(path: dbPath, error))")
            return ExitCode.failure.code
        }
        let monitor: Monitor
        do {
            monitor = try Monitor(profile: profile, store: store, recordDeliveries: !noHooks)
        } catch let error as MonitorError {
            writeStderr("geomon: error: \(error)")
            return ExitCode.dataError.code
        } catch let error as SQLiteError {
            writeStderr("geomon: error: \(DatabaseTrust.writeFailure(path: dbPath, error))")
            return ExitCode.failure.code
        }
        // Without hooks and without pacing nothing acts on an event before its batch commits,
        // so events ride with their batch (they are still printed only after the commit).
        monitor.commitEventsImmediately = !noHooks || speed != nil
        let hooks = try ReplayHooks.start(profile: profile, store: store, monitor: monitor, enabled: !noHooks)
        let replay = Replay(monitor: monitor, speed: speed)
        if let hooks { replay.pause = hooks.pause }
        let progressBar = isatty(2) == 1 && fixes.count >= 5000 ? ProgressBar() : nil
        if let progressBar { replay.progress = { progressBar.update($0, of: $1) } }
        let clock = ContinuousClock()
        let started = clock.now
        let cpuStarted = processCPUSeconds()
        let summary: ReplaySummary
        do {
            summary = try replay.run(source: RecordedFixes(powered.delivered), total: powered.delivered.count) { events in
                for stored in events { print(EventFormatter.line(stored.event, json: json)) }
                fflush(nil)
            }
        } catch let error as SQLiteError {
            progressBar?.finish()
            fflush(nil)
            writeStderr("geomon: error: \(DatabaseTrust.writeFailure(path: dbPath, error))")
            return ExitCode.failure.code
        }
        try ReplayHooks.finish(hooks, dbPath: dbOption)
        let elapsed = (clock.now - started).secondsValue
        let cpu = processCPUSeconds() - cpuStarted
        progressBar?.finish()
        fflush(nil)
        let powerExit = power.finish(powered, store: store, title: "geomon replay · \(profile.name) · \(trackPaths.joined(separator: " "))", formatText: !json)
        if powerExit != 0 { return powerExit }
        if stats {
            let rate = elapsed > 0 ? Int((Double(summary.processed) / elapsed).rounded()) : 0
            let cpuRate = cpu > 0 ? Int((Double(summary.processed) / cpu).rounded()) : 0
            writeStderr("replay: \(summary.processed) fixes processed, \(summary.skipped) skipped, \(summary.events) events in "
                        + "\(Int((elapsed * 1000).rounded())) ms wall (\(rate) fixes/s), \(Int((cpu * 1000).rounded())) ms CPU "
                        + "(\(cpuRate) fixes/s), db \(dbOption ?? "temporary file")")
        }
        return 0
    }
}

/// CPU time used by this process (user + system), in seconds.
func processCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A one-line progress bar on stderr (only used when stderr is a terminal).
final class ProgressBar {
    private var lastPercent = -1

    func update(_ done: Int, of total: Int) {
        let percent = total > 0 ? done * 100 / total : 100
        guard percent != lastPercent else { return }
        lastPercent = percent
        let filled = percent * 30 / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
        let line = "\r[\(bar)] \(percent)% \(done)/\(total) fixes"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    func finish() {
        _ = "\r\u{1B}[K".withCString { write(2, $0, strlen($0)) }
    }
}
