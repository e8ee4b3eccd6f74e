#if canImport(Glibc)
import Glibc
#endif
import GeomonCore
import GeomonDaemon
import GeomonFormat
import GeomonSources

enum ReceiverCommand {
    static let group = CommandGroup(
        name: "receiver",
        abstract: "Checks the GNSS receiver and its power switch",
        discussion: "See docs/power.md, \"Switching the receiver\".",
        subcommands: [ReceiverTestCommand.self]
    )
}

/// `geomon receiver test`: switches the receiver off with the profile's method, checks that its
/// reports stop, switches it on and measures the time to its first fix.
struct ReceiverTestCommand: GeomonCommand {
    static let spec = CommandSpec(
        "receiver test",
        abstract: "Switches the receiver off and on with the profile's power method and says whether it obeyed",
        discussion: """
        What to run once on new hardware, with gpsd running and no `geomon run` switching the
        same receiver. Connects to gpsd (the profile's sources.gnss, or --gpsd), waits for a
        fix, switches the receiver off with sources.gnss.power, watches for --off-for seconds
        whether its reports stop (a receiver may send what it had buffered for up to 3 s), then
        switches it on and measures the time to its first fix. Prints what it saw and a verdict;
        exits 0 when the switch works, 1 when it has no effect or the receiver gives no fix,
        69 when gpsd cannot be reached. With `power: watch` nothing is switched that geomon can
        observe: it says so and exits 0.
        """,
        options: [
            .option("--profile", "PROFILE", "the profile (its sources.gnss)", completion: .file(["yaml", "yml"])),
            .option("--gpsd", "HOST:PORT", "gpsd to use instead of the profile's host and port"),
            .option("--off-for", "SECONDS", "how long to keep the receiver off and watch (default 10, at least 5)"),
            .option("--fix-timeout", "SECONDS", "how long to wait for a fix, before and after (default 60)"),
            insecureProfileOption,
        ],
        required: ["--profile"]
    )

    var profilePath: String
    var gpsd: (host: String, port: Int)?
    var offFor: Double
    var fixTimeout: Double
    var insecurePermissions: Bool

    init(_ arguments: ParsedArguments) throws {
        profilePath = try arguments.required("--profile")
        if let endpoint = arguments.value("--gpsd") {
            guard let parsed = parseEndpoint(endpoint) else { throw UsageError("option '--gpsd' needs HOST:PORT (got '\(endpoint)')") }
            gpsd = parsed
        }
        offFor = try arguments.double("--off-for", in: 5...3600) ?? 10
        fixTimeout = try arguments.double("--fix-timeout", in: 1...3600) ?? 60
        insecurePermissions = arguments.flag("--insecure-permissions")
    }

    func run() throws -> Int32 {
        let profile = try loadProfileOrExit(profilePath, insecurePermissions: insecurePermissions)
        guard let gnss = profile.sources.gnss else {
            throw CommandFailure("the profile '\(profile.name)' has no sources.gnss: nothing to test", exitCode: .dataError)
        }
        let host = gpsd?.host ?? gnss.host
        let port = gpsd?.port ?? gnss.port
        let feed = GPSDSource(host: host, port: String(port))
        do {
            try feed.connect()
            try feed.watch(enabled: true, device: gnss.device)
        } catch {
            throw CommandFailure("\(error)", exitCode: .unavailable)
        }
        defer { _ = feed.disconnect(reason: "done") }
        let clock = ContinuousClock()
        let timeout = Duration.milliseconds(Int64(fixTimeout * 1000))

        print("receiver test: gpsd \(host):\(port), power: \(gnss.power.name)")
        guard let first = try Self.nextFix(feed, clock: clock, until: clock.now + timeout) else {
            print("receiver test: no fix within \(NumberText.short(fixTimeout, 0)) s: is the receiver connected, and does it see the sky? (gpspipe -w shows what gpsd has)")
            return 1
        }
        let device = gnss.device ?? feed.reportingDevice
        print("  fixes: yes, from \(device ?? "a device gpsd did not name") (\(NumberText.short(first.fix.coordinate.latitude, 5)), \(NumberText.short(first.fix.coordinate.longitude, 5)) ±\(NumberText.short(first.fix.horizontalAccuracyMeters, 0)) m)")
        guard gnss.power.switchesReceiver else {
            print("receiver test: not testable: 'power: watch' only turns gpsd's watch off; whether the receiver then powers down cannot be seen from gpsd (docs/power.md, \"Switching the receiver\")")
            return 0
        }
        let receiverSwitch = ReceiverPowerSwitch(method: gnss.power, device: gnss.device, directory: profile.directory)

        // Off: the reports must stop within the grace, and stay stopped.
        let switchedOff = clock.now
        if case let .failed(reason) = receiverSwitch.set(on: false, feed: feed) {
            print("receiver test: cannot switch the receiver off: \(reason)")
            return 1
        }
        let grace = GNSSService.offGrace
        var lastReport: ContinuousClock.Instant?
        var lateReports = 0
        let offUntil = switchedOff + .milliseconds(Int64(offFor * 1000))
        while let report = try Self.nextFix(feed, clock: clock, until: offUntil) {
            lastReport = report.at
            if report.at - switchedOff > grace { lateReports += 1 }
        }
        // On again, whatever the verdict: the receiver is left as it was found.
        let switchedOn = clock.now
        if case let .failed(reason) = receiverSwitch.set(on: true, feed: feed) {
            print("receiver test: cannot switch the receiver on again: \(reason)")
            return 1
        }
        let wake = try Self.nextFix(feed, clock: clock, until: clock.now + timeout)

        let stopped = lastReport.map { "the last report \(NumberText.fixed(($0 - switchedOff).secondsValue, 1)) s after the switch" } ?? "no report after the switch"
        if lateReports > 0 {
            print("  off: \(lateReports) reports more than \(NumberText.short(grace.secondsValue, 0)) s after the switch; \(stopped)")
        } else {
            print("  off: \(stopped); none in the \(NumberText.short(offFor, 0)) s watched")
        }
        if let wake {
            let ttff = wake.at - switchedOn
            let assumed = gnss.effectiveRestart
            let planned = profile.policy.receiver.restarting(assumed).ttffHot
            print("  on: first fix \(NumberText.fixed(ttff.secondsValue, 1)) s after switching on; the profile plans a \(assumed.rawValue) start (\(NumberText.fixed(planned.secondsValue, 1)) s)")
            // Advice about starts only when the switch worked: a receiver that never went off
            // says nothing about its restarts.
            switch lateReports > 0 ? nil : RestartClass.advice(measured: ttff, assumed: assumed, receiver: profile.policy.receiver) {
            case let .ttffHot(seconds)?:
                print("  note: a slow hot start (a warm start, with its ephemeris read from the sky, takes at least \(NumberText.short(min(RestartClass.shortestWarmStart, profile.policy.receiver.ttffWarm).secondsValue, 0)) s): set 'ttff_hot: \(NumberText.short(seconds.secondsValue, 0))s' in policy.receiver so the policy wakes the receiver early enough (docs/power.md, \"Restart classes\")")
            case let .restart(fits)?:
                print("  note: that is a \(fits.rawValue) start: with 'restart: \(fits.rawValue)' in sources.gnss.power the policy wakes the receiver early enough (docs/power.md, \"Restart classes\")")
            case nil:
                break
            }
        } else {
            print("  on: no fix within \(NumberText.short(fixTimeout, 0)) s of switching on")
        }
        if lateReports > 0 {
            print("receiver test: no effect: the receiver kept reporting after 'power: \(gnss.power.name)' switched it off; choose another method (docs/power.md, \"Switching the receiver\")")
            return 1
        }
        guard wake != nil else {
            print("receiver test: the receiver went quiet but did not come back: check that the 'on' switch of 'power: \(gnss.power.name)' works")
            return 1
        }
        print("receiver test: pass: 'power: \(gnss.power.name)' switches this receiver off and on")
        return 0
    }

    /// The next fix gpsd reports before `deadline`, with when it came; nil at the deadline.
    /// An epoch still waiting for its accuracy or the receiver's velocity is taken after
    /// `GPSDSource.epochBudget`.
    static func nextFix(_ feed: GPSDSource, clock: ContinuousClock, until deadline: ContinuousClock.Instant) throws -> (fix: Fix, at: ContinuousClock.Instant)? {
        while clock.now < deadline {
            guard let fd = feed.fileDescriptor else { throw CommandFailure("gpsd closed the connection", exitCode: .unavailable) }
            let left = deadline - clock.now
            let wait = feed.hasPendingFix ? min(left, GPSDSource.epochBudget) : left
            var polls = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&polls, 1, Int32(clamping: max(1, wait.wholeMilliseconds)))
            let events = ready > 0 ? feed.readAvailable() : feed.flushPendingFix()
            for event in events {
                switch event {
                case let .fix(fix): return (fix, clock.now)
                case let .stateChanged(.disconnected(reason)): throw CommandFailure("gpsd: \(reason)", exitCode: .unavailable)
                case let .refused(message):
                    throw CommandFailure("gpsd refused the switch: \(message) (gpsd writes only to a receiver it has identified from its reports: docs/sources.md)",
                                         exitCode: .unavailable)
                case .stateChanged: break
                }
            }
        }
        return nil
    }
}
