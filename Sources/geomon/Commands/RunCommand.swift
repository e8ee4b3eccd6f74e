import GeomonDaemon
import Foundation

/// `geomon run`: the live monitor on gpsd.
enum RunCommand: Command {
    static let name = "run"
    static let summary = "Runs the monitor on a live receiver through gpsd"
    static let help = """
    usage: geomon run --profile PROFILE [--db PATH] [--gpsd HOST:PORT] [--log-level LEVEL]
                      [--always-on] [--print-events] [--exit-after SECONDS]
                      [--insecure-permissions]

    Runs the monitor: reads fixes from gpsd (and the profile's coarse command), follows the
    power policy (enabling gpsd's watch only when the receiver is needed), decides events and
    runs the profile's hooks. The profile is validated first (exit 65 on errors).

    One instance per database (a second one exits 1). SIGTERM/SIGINT stop gracefully; SIGHUP
    reloads the profile (an invalid one is rejected and the running one stays). Logs go to
    stderr, journald-friendly under systemd; Type=notify readiness and the watchdog are used
    when $NOTIFY_SOCKET is set. `geomon status --db PATH` shows what a running instance does.

    options:
      --profile PROFILE     the profile to run (required)
      --db PATH             database (default: the profile's storage.path, else
                            /var/lib/geomon/NAME.db)
      --gpsd HOST:PORT      gpsd to use instead of the profile's sources.gnss host and port
      --log-level LEVEL     error, warning, notice (default), info or debug
      --always-on           keep the receiver on (no power policy; for comparison)
      --print-events        also print each event as a JSON line on stdout
      --exit-after SECONDS  stop by itself after this long (tests and demos)
      --insecure-permissions
                            accept group/world-writable profiles, hooks and databases
                            (see docs/security.md)
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        guard let profilePath = try arguments.option("--profile") else { throw UsageError("missing '--profile PROFILE'") }
        var options = RunOptions(profilePath: profilePath)
        options.databasePath = try arguments.option("--db")
        if let endpoint = try arguments.option("--gpsd") {
            guard let parsed = parseEndpoint(endpoint) else {
                throw UsageError("option '--gpsd' needs HOST:PORT (got '\(endpoint)')")
            }
            options.gpsdOverride = parsed
        }
        let levelName = try arguments.choice("--log-level", LogLevel.allCases.map(\.name), default: "notice")
        options.logLevel = LogLevel(name: levelName) ?? .notice
        options.printEvents = arguments.flag("--print-events")
        options.alwaysOn = arguments.flag("--always-on")
        options.insecurePermissions = arguments.flag("--insecure-permissions")
        options.exitAfterSeconds = try arguments.doubleOption("--exit-after", range: 0...1e9)
        options.environment = ProcessInfo.processInfo.environment
        try arguments.finish()

        let log = Log(level: options.logLevel)
        let daemon: LiveDaemon
        do {
            daemon = try LiveDaemon(options: options, log: log)
        } catch {
            writeStderr(error.exitCode == 65 || error.exitCode == 66 ? error.message : "geomon: error: \(error.message)")
            return error.exitCode
        }
        return daemon.run()
    }
}
