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
        observe: it says so and exits 0. With --cycles N it switches off and on N times and
        prints the median and the slowest of the first fixes, and the hot start the policy will
        plan with once it has measured starts like these (docs/power.md, "The time to first fix,
        measured").
        """,
        options: [
            .option("--profile", "PROFILE", "the profile (its sources.gnss)", completion: .file(["yaml", "yml"])),
            .option("--gpsd", "HOST:PORT", "gpsd to use instead of the profile's host and port"),
            .option("--off-for", "SECONDS", "how long to keep the receiver off and watch (default 10, at least 5)"),
            .option("--fix-timeout", "SECONDS", "how long to wait for a fix, before and after (default 60)"),
            .option("--cycles", "N", "how many times to switch off and on (default 1, at most 100)"),
            insecureProfileOption,
        ],
        required: ["--profile"]
    )

    var profilePath: String
    var gpsd: (host: String, port: Int)?
    var offFor: Double
    var fixTimeout: Double
    var cycles: Int
    var insecurePermissions: Bool

    init(_ arguments: ParsedArguments) throws {
        profilePath = try arguments.required("--profile")
        if let endpoint = arguments.value("--gpsd") {
            guard let parsed = parseEndpoint(endpoint) else { throw UsageError("option '--gpsd' needs HOST:PORT (got '\(endpoint)')") }
            gpsd = parsed
        }
        offFor = try arguments.double("--off-for", in: 5...3600) ?? 10
        fixTimeout = try arguments.double("--fix-timeout", in: 1...3600) ?? 60
        cycles = try arguments.int("--cycles", in: 1...100) ?? 1
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
        let assumed = gnss.effectiveRestart
        let planned = profile.policy.receiver.restarting(assumed).ttffHot
        var starts: [Duration] = []
        for cycle in 1...cycles {
            let label = cycles > 1 ? "cycle \(cycle): " : ""
            switch try Self.offAndOn(feed, receiverSwitch, clock: clock, offFor: offFor, timeout: timeout) {
            case let .failed(reason):
                print("receiver test: \(reason)")
                return 1
            case let .done(lateReports, stopped, wake):
                if lateReports > 0 {
                    print("  \(label)off: \(lateReports) reports more than \(NumberText.short(GNSSService.offGrace.secondsValue, 0)) s after the switch; \(stopped)")
                    print("receiver test: no effect: the receiver kept reporting after 'power: \(gnss.power.name)' switched it off; choose another method (docs/power.md, \"Switching the receiver\")")
                    return 1
                }
                print("  \(label)off: \(stopped); none in the \(NumberText.short(offFor, 0)) s watched")
                guard let wake else {
                    print("  \(label)on: no fix within \(NumberText.short(fixTimeout, 0)) s of switching on")
                    print("receiver test: the receiver went quiet but did not come back: check that the 'on' switch of 'power: \(gnss.power.name)' works")
                    return 1
                }
                starts.append(wake)
                print("  \(label)on: first fix \(NumberText.fixed(wake.secondsValue, 1)) s after switching on; the profile plans a \(assumed.rawValue) start (\(NumberText.fixed(planned.secondsValue, 1)) s)")
            }
        }
        // Advice about starts only when the switch worked: a receiver that never went off
        // says nothing about its restarts.
        let typical = PowerPolicy.median(starts) ?? planned
        if cycles > 1 {
            print("  first fixes: median \(NumberText.fixed(typical.secondsValue, 1)) s, slowest \(NumberText.fixed((starts.max() ?? typical).secondsValue, 1)) s of \(starts.count)")
        }
        switch RestartClass.advice(measured: typical, assumed: assumed, receiver: profile.policy.receiver) {
        case let .ttffHot(seconds)?:
            print("  note: a slow hot start (a warm start, with its ephemeris read from the sky, takes at least \(NumberText.short(min(RestartClass.shortestWarmStart, profile.policy.receiver.ttffWarm).secondsValue, 0)) s): set 'ttff_hot: \(NumberText.short(seconds.secondsValue, 0))s' in policy.receiver so the policy wakes the receiver early enough (docs/power.md, \"Restart classes\")")
        case let .restart(fits)?:
            print("  note: that is a \(fits.rawValue) start: with 'restart: \(fits.rawValue)' in sources.gnss.power the policy wakes the receiver early enough (docs/power.md, \"Restart classes\")")
        case nil:
            break
        }
        if cycles > 1, assumed == .hot {
            // What the policy's own measurement does with starts like these (the same rule).
            let learned = PowerPolicy.replacingTTFFHot(median: typical, profile: planned, inEffect: planned)
            let measured = "once it has measured \(PowerPolicy.ttffMinimumSamples) hot starts like these"
            if let learned {
                print("  planning: the policy plans with \(NumberText.fixed(learned.secondsValue, 1)) s instead of \(NumberText.fixed(planned.secondsValue, 1)) s \(measured); 'geomon replay --receiver-ttff-hot \(NumberText.fixed(typical.secondsValue, 1))' shows what a receiver like this costs on a recorded track (docs/power.md, \"The time to first fix, measured\")")
            } else {
                print("  planning: the policy keeps the planned \(NumberText.fixed(planned.secondsValue, 1)) s \(measured) (docs/power.md, \"The time to first fix, measured\")")
            }
        }
        print("receiver test: pass: 'power: \(gnss.power.name)' switches this receiver off and on")
        return 0
    }

    enum Cycle {
        /// A switch that could not be sent, with the sentence that says so.
        case failed(String)
        /// Reports later than the grace after the switch off, where the last came, and the time
        /// from the switch on to the first fix (nil: none within the timeout).
        case done(lateReports: Int, stopped: String, wake: Duration?)
    }

    /// Switches the receiver off, watches its reports for `offFor` seconds, switches it on again
    /// (whatever the reports did: the receiver is left as it was found) and times its first fix.
    static func offAndOn(_ feed: GPSDSource, _ receiverSwitch: ReceiverPowerSwitch, clock: ContinuousClock,
                         offFor: Double, timeout: Duration) throws -> Cycle {
        // Off: the reports must stop within the grace, and stay stopped.
        let switchedOff = clock.now
        if case let .failed(reason) = receiverSwitch.set(on: false, feed: feed) {
            return .failed("cannot switch the receiver off: \(reason)")
        }
        let grace = GNSSService.offGrace
        var lastReport: ContinuousClock.Instant?
        var lateReports = 0
        let offUntil = switchedOff + .milliseconds(Int64(offFor * 1000))
        while let report = try nextFix(feed, clock: clock, until: offUntil) {
            lastReport = report.at
            if report.at - switchedOff > grace { lateReports += 1 }
        }
        let switchedOn = clock.now
        if case let .failed(reason) = receiverSwitch.set(on: true, feed: feed) {
            return .failed("cannot switch the receiver on again: \(reason)")
        }
        let wake = try nextFix(feed, clock: clock, until: clock.now + timeout)
        let stopped = lastReport.map { "the last report \(NumberText.fixed(($0 - switchedOff).secondsValue, 1)) s after the switch" } ?? "no report after the switch"
        return .done(lateReports: lateReports, stopped: stopped, wake: wake.map { $0.at - switchedOn })
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
