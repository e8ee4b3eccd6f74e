#if canImport(Glibc)
import Glibc
#endif
import GeomonDaemon
import FoundationEssentials

/// `geomon run`: the live monitor on gpsd.
struct RunCommand: GeomonCommand {
    static let spec = CommandSpec(
        "run",
        abstract: "Runs the monitor on a live receiver through gpsd",
        discussion: """
        Runs the monitor: reads fixes from gpsd (and the profile's coarse command), follows the
        power policy (enabling gpsd's watch only when the receiver is needed), decides events and
        runs the profile's hooks. The profile is validated first (exit 65 on errors).

        One instance per database (a second one exits 1). SIGTERM/SIGINT stop gracefully; SIGHUP
        reloads the profile (an invalid one is rejected and the running one stays). Logs go to
        stderr, journald-friendly under systemd; Type=notify readiness and the watchdog are used
        when $NOTIFY_SOCKET is set. `geomon status --db PATH` shows what a running instance does.
        """,
        options: [
            .option("--profile", "PROFILE", "the profile to run", completion: .file(["yaml", "yml"])),
            .option("--db", "PATH", "database (default: the profile's storage.path, else /var/lib/geomon/NAME.db)", completion: .file(["db"])),
            .option("--gpsd", "HOST:PORT", "gpsd to use instead of the profile's sources.gnss host and port"),
            .choice("--log-level", LogLevel.allCases.map(\.name), "error, warning, notice (default), info or debug"),
            .flag("--always-on", "keep the receiver on (no power policy; for comparison)"),
            .flag("--print-events", "also print each event as a JSON line on stdout"),
            .option("--exit-after", "SECONDS", "stop by itself after this long (tests and demos)"),
            .option("--power-supply", "DIR", "the kernel's power-supply class, or a directory laid out like it (default /sys/class/power_supply)", completion: .directory),
            .flag("--insecure-permissions", "accept group/world-writable profiles, hooks and databases (see docs/security.md)"),
        ],
        required: ["--profile"]
    )

    var options: RunOptions

    init(_ arguments: ParsedArguments) throws {
        options = RunOptions(profilePath: try arguments.required("--profile"))
        options.databasePath = arguments.value("--db")
        if let endpoint = arguments.value("--gpsd") {
            guard let parsed = parseEndpoint(endpoint) else {
                throw UsageError("option '--gpsd' needs HOST:PORT (got '\(endpoint)')")
            }
            options.gpsdOverride = parsed
        }
        options.logLevel = LogLevel(name: arguments.choice("--log-level", default: "notice")) ?? .notice
        options.printEvents = arguments.flag("--print-events")
        options.alwaysOn = arguments.flag("--always-on")
        options.insecurePermissions = arguments.flag("--insecure-permissions")
        options.exitAfterSeconds = try arguments.double("--exit-after", in: 0...1e9)
        if let directory = arguments.value("--power-supply") { options.powerSupplyDirectory = directory }
    }

    func run() throws -> Int32 {
        var options = options
        options.environment = ProcessInfo.processInfo.environment
        let log = Log(level: options.logLevel)
        // `geomon hooks retry` and `publish retry` signal whoever holds the instance lock; until
        // the daemon's handler is installed, a SIGUSR1 or SIGUSR2 must not kill it (the
        // commands signal again).
        signal(SIGUSR1, SIG_IGN)
        signal(SIGUSR2, SIG_IGN)
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
