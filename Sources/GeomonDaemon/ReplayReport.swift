import GeomonCore
import GeomonEvaluation
import GeomonFormat

/// The energy report of a replay (`--report FILE`, the table, the summary line).
///
/// JSON members, in this order: `profile`, `mode`, `always_on`, the energy figures (`track_s`,
/// `fixes_used`, `gnss_on_s`, `gnss_acquire_s`, `gnss_track_s`, `duty_cycle`, `wakeups`,
/// `energy_mwh`, `events`), `fixes_recorded`, `fixes_withheld`, `on_by_reason` (on-time seconds
/// by reason, `OnTimeLedger`); with `--compare-always-on` also `on_time_share` (of always-on),
/// `baseline` (the energy figures of the always-on run), `match` (`recall`, `extra`,
/// `latency_s_p50`, `latency_s_p95`, `missed`, `latencies_s`: every matched event's latency,
/// in baseline order) and `oracle` (`crossings`, `gnss_on_s`, `energy_mwh`). Seconds and energy
/// have 3 decimals, shares 4; no clock: byte-identical for the same input.
public enum ReplayReport {
    public static func json(_ run: ReplayRun) -> String {
        var o = JSONObject()
        o.add("profile", run.profile.name)
        o.add("mode", run.profile.mode.rawValue)
        o.add("always_on", run.options.alwaysOn)
        if let report = run.report { add(report, to: &o) }
        o.add("fixes_recorded", run.recording.count)
        o.add("fixes_withheld", run.recording.count - (run.report?.fixesUsed ?? 0))
        var reasons = JSONObject()
        for entry in run.source?.receiver.ledger.entries ?? [] { reasons.add(entry.label, entry.seconds, decimals: 3) }
        o.add("on_by_reason", reasons)
        o.add("activity", activityText(run))
        o.add("bounds", run.configuration.plannedBounds.text)
        o.add("ttff_hot_learned_s", run.source?.receiver.ttffChanges.last?.to.secondsValue, decimals: 3)
        if !run.profile.modes.isEmpty, let ledger = run.source?.receiver.modes {
            var modes = JSONObject()
            for entry in ledger.entries {
                var m = JSONObject()
                m.add("s", entry.seconds, decimals: 3)
                m.add("gnss_on_s", entry.onSeconds, decimals: 3)
                modes.add(entry.mode, m)
            }
            o.add("modes", modes)
            o.add("mode_switches", ledger.switches)
        }
        let violations = run.source?.receiver.violations ?? []
        o.add("violations", raw: JSON.array(raw: violations.map { v in
            var item = JSONObject()
            item.add("time", v.time.rfc3339)
            item.add("kind", v.kind.rawValue)
            item.add("observed_mps", v.observedMetersPerSecond, decimals: 2)
            item.add("planned_max_speed_mps", v.planned.maxSpeedMetersPerSecond, decimals: 2)
            item.add("widened_max_speed_mps", v.widened.maxSpeedMetersPerSecond, decimals: 2)
            if let a = v.observedAcceleration { item.add("observed_mps2", a, decimals: 2) }
            item.add("planned_max_acceleration_mps2", v.planned.maxAccelerationMetersPerSecondSquared, decimals: 2)
            item.add("widened_max_acceleration_mps2", v.widened.maxAccelerationMetersPerSecondSquared, decimals: 2)
            return item.text
        }))
        if let report = run.report, let baseline = run.baselineReport, let match = run.match, let oracle = run.oracle {
            o.add("on_time_share", share(report, baseline), decimals: 4)
            var b = JSONObject()
            add(baseline, to: &b)
            o.add("baseline", b)
            var m = JSONObject()
            m.add("recall", match.recall, decimals: 4)
            m.add("extra", match.extra)
            m.add("latency_s_p50", match.latencyP50Seconds, decimals: 3)
            m.add("latency_s_p95", match.latencyP95Seconds, decimals: 3)
            m.add("missed", match.missed.count)
            m.add("missed_at", match.missed.map { $0.time.rfc3339 })
            m.add("latencies_s", raw: JSON.array(raw: match.latenciesSeconds.map { JSON.number($0, decimals: 3) }))
            o.add("match", m)
            var bound = JSONObject()
            bound.add("crossings", oracle.crossings)
            bound.add("gnss_on_s", oracle.gnssOnSeconds, decimals: 3)
            bound.add("energy_mwh", oracle.energyMilliwattHours, decimals: 3)
            o.add("oracle", bound)
        }
        return o.multilineText
    }

    static func add(_ r: EnergyReport, to o: inout JSONObject) {
        o.add("track_s", r.trackSeconds, decimals: 3)
        o.add("fixes_used", r.fixesUsed)
        o.add("fixes_interpolated", r.fixesInterpolated)
        o.add("gnss_on_s", r.gnssOnSeconds, decimals: 3)
        o.add("gnss_acquire_s", r.acquireSeconds, decimals: 3)
        o.add("gnss_track_s", r.trackingSeconds, decimals: 3)
        o.add("duty_cycle", r.dutyCycle, decimals: 4)
        o.add("wakeups", r.wakeups)
        o.add("power_method", r.powerMethod)
        o.add("restart", r.restart.rawValue)
        o.add("restart_ttff_s", r.restartTTFFSeconds, decimals: 3)
        o.add("gnss_unreleased_s", r.unreleasedSeconds, decimals: 3)
        o.add("gnss_powered_s", r.poweredSeconds, decimals: 3)
        o.add("energy_mwh", r.energyMilliwattHours, decimals: 3)
        o.add("events", r.events)
    }

    /// `foot`, or `derived (foot 12, vehicle 3)` / `recorded (…)`: the declared activity, or the
    /// sensed changes by activity.
    static func activityText(_ run: ReplayRun) -> String {
        let how: String
        switch run.options.activity {
        case .profile, .declared: return run.profile.policy.activity.rawValue
        case .derive: how = "derived"
        case .recorded: how = "recorded"
        }
        var counts: [(Activity, Int)] = []
        for change in run.activities {
            if let k = counts.firstIndex(where: { $0.0 == change.activity }) { counts[k].1 += 1 } else { counts.append((change.activity, 1)) }
        }
        return how + " (" + counts.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ") + ")"
    }

    static func share(_ r: EnergyReport, _ b: EnergyReport) -> Double {
        b.gnssOnSeconds > 0 ? r.gnssOnSeconds / b.gnssOnSeconds : 0
    }

    /// The same figures as a readable table (`--format text`).
    public static func table(_ run: ReplayRun) -> String {
        guard let r = run.report else { return "" }
        let b = run.baselineReport
        func f(_ v: Double, _ d: Int) -> String { NumberText.fixed(v, d) }
        var rows: [(String, String, String)] = [
            ("", run.options.alwaysOn ? "always-on" : "policy", b == nil ? "" : "always-on"),
            ("track s", f(r.trackSeconds, 1), b.map { f($0.trackSeconds, 1) } ?? ""),
            ("fixes used", "\(r.fixesUsed) of \(run.recording.count)", b.map { "\($0.fixesUsed)" } ?? ""),
            ("fixes interpolated", "\(r.fixesInterpolated)", b.map { "\($0.fixesInterpolated)" } ?? ""),
            ("gnss on s", f(r.gnssOnSeconds, 1), b.map { f($0.gnssOnSeconds, 1) } ?? ""),
            ("  acquiring s", f(r.acquireSeconds, 1), b.map { f($0.acquireSeconds, 1) } ?? ""),
            ("  tracking s", f(r.trackingSeconds, 1), b.map { f($0.trackingSeconds, 1) } ?? ""),
            ("duty cycle %", f(r.dutyCycle * 100, 1), b.map { f($0.dutyCycle * 100, 1) } ?? ""),
            ("wakeups", "\(r.wakeups)", b.map { "\($0.wakeups)" } ?? ""),
            ("power method", r.powerMethod, b.map { $0.powerMethod } ?? ""),
            ("restart", "\(r.restart.rawValue) (\(f(r.restartTTFFSeconds, 1)) s)", b.map { "\($0.restart.rawValue) (\(f($0.restartTTFFSeconds, 1)) s)" } ?? ""),
            ("powered s", f(r.poweredSeconds, 1), b.map { f($0.poweredSeconds, 1) } ?? ""),
            ("energy mWh", f(r.energyMilliwattHours, 2), b.map { f($0.energyMilliwattHours, 2) } ?? ""),
            ("events", "\(r.events)", b.map { "\($0.events)" } ?? ""),
        ]
        for entry in run.source?.receiver.ledger.entries ?? [] {
            rows.append(("  s \(entry.label)", f(entry.seconds, 1), ""))
        }
        if !run.profile.modes.isEmpty, let ledger = run.source?.receiver.modes {
            rows.append(("mode switches", "\(ledger.switches)", ""))
            for entry in ledger.entries {
                let duty = entry.seconds > 0 ? " (\(f(entry.onSeconds / entry.seconds * 100, 1)) %)" : ""
                rows.append(("  mode \(entry.mode)", "\(f(entry.seconds, 1)) s, gnss on \(f(entry.onSeconds, 1)) s" + duty, ""))
            }
        }
        rows.append(("activity", activityText(run), ""))
        rows.append(("planned bounds", run.configuration.plannedBounds.text, ""))
        let violations = run.source?.receiver.violations ?? []
        rows.append(("bound violations", violations.first.map { v in
            let observed = v.observedAcceleration.map { "\(f($0, 2)) m/s²" } ?? "\(f(v.observedMetersPerSecond, 1)) m/s"
            return "\(violations.count), first at \(v.time.rfc3339) (\(v.kind.rawValue): \(observed))"
        } ?? "0", ""))
        if let b, let match = run.match, let oracle = run.oracle {
            rows.append(("on-time % of always-on", f(share(r, b) * 100, 1), ""))
            rows.append(("recall", f(match.recall, 3), ""))
            rows.append(("extra events", "\(match.extra)", ""))
            rows.append(("latency p50 / p95 s", "\(match.latencyP50Seconds.map { f($0, 1) } ?? "-") / \(match.latencyP95Seconds.map { f($0, 1) } ?? "-")", ""))
            rows.append(("oracle bound: crossings", "\(oracle.crossings)", ""))
            rows.append(("oracle bound: gnss on s", f(oracle.gnssOnSeconds, 1), ""))
            rows.append(("oracle bound: energy mWh", f(oracle.energyMilliwattHours, 2), ""))
        }
        let w0 = rows.map(\.0.count).max() ?? 0
        let w1 = rows.map(\.1.count).max() ?? 0
        return rows.map { row in
            var line = row.0 + String(repeating: " ", count: w0 - row.0.count) + "  "
                + String(repeating: " ", count: w1 - row.1.count) + row.1
                + (row.2.isEmpty ? "" : "  " + row.2)
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n") + "\n"
    }

    /// The policy's actions and the delivered GNSS fixes in the order they happened, one per
    /// line (`--policy-log`): `TIME ACTION REASON…` or `TIME fix lat lon acc=…`. Deterministic.
    public static func policyLog(_ run: ReplayRun) -> String {
        guard let receiver = run.source?.receiver else { return "" }
        var out = ""
        var next = 0
        let fixes = receiver.delivered
        func fixLines(upTo end: Int) {
            while next < end {
                let fix = fixes[next]
                next += 1
                guard fix.source == .gnss else { continue }
                let c = fix.coordinate
                out += "\(fix.time.rfc3339) fix \(NumberText.fixed(c.latitude, 7)) \(NumberText.fixed(c.longitude, 7)) acc=\(NumberText.fixed(fix.horizontalAccuracyMeters, 1))m\n"
            }
        }
        for timed in receiver.actions {
            fixLines(upTo: timed.afterFixes)
            out += "\(timed.time.rfc3339) \(timed.action.text)\n"
        }
        fixLines(upTo: fixes.count)
        return out
    }

    /// A line for stderr when the receiver model withheld recorded fixes (nil when it did not):
    /// those not used, less `notNewer` (fixes dated at or before the one before them, dropped
    /// whatever the receiver did).
    public static func withheldNote(_ run: ReplayRun, notNewer: Int = 0) -> String? {
        guard let r = run.report, !run.options.alwaysOn else { return nil }
        let withheld = run.recording.count - r.fixesUsed - notNewer
        guard withheld > 0 else { return nil }
        return "replay: note: the receiver model withheld \(withheld) of \(run.recording.count) recorded fixes "
            + "(they came while the modelled receiver was off or acquiring its first fix); --always-on uses every fix"
    }

    /// A line for stderr when no recorded GNSS fix is within `sources.gnss.min_accuracy` (nil
    /// otherwise): the run decided nothing, and the recording's accuracy is why (a GPX without
    /// `hdop` is read at 30 m).
    public static func accuracyNote(_ run: ReplayRun) -> String? {
        guard let gnss = run.profile.sources.gnss else { return nil }
        var count = 0
        var best = Double.infinity
        for fix in run.recording.fixes() where fix.source == .gnss {
            count += 1
            best = min(best, fix.horizontalAccuracyMeters)
            if best <= gnss.minAccuracyMeters { return nil }
        }
        guard count > 0 else { return nil }
        return "replay: note: none of the \(count) recorded fixes is within sources.gnss.min_accuracy (\(NumberText.shortest(gnss.minAccuracyMeters)) m; "
            + "the best is \(NumberText.shortest(best)) m), so no fence could be decided; a recording without accuracy is read at 30 m (docs/sources.md)"
    }

    /// One line for stderr at the end of a replay.
    public static func summaryLine(_ run: ReplayRun) -> String {
        guard let r = run.report else { return "replay: no fixes" }
        func f(_ v: Double, _ d: Int) -> String { NumberText.fixed(v, d) }
        var line = "replay: energy: gnss on \(f(r.gnssOnSeconds, 1)) s of \(f(r.trackSeconds, 1)) s "
            + "(duty \(f(r.dutyCycle * 100, 1)) %), \(r.wakeups) wakeups, \(r.fixesUsed) of \(run.recording.count) fixes used"
            + (r.fixesInterpolated > 0 ? " (and \(r.fixesInterpolated) interpolated)" : "") + ", \(f(r.energyMilliwattHours, 2)) mWh"
        if r.unreleasedSeconds > 0 {
            line += " (power: \(r.powerMethod), powered \(f(r.poweredSeconds, 1)) s with gpsd's 60 s release after each switch-off)"
        }
        if let b = run.baselineReport, let match = run.match {
            line += "; always-on \(f(b.gnssOnSeconds, 1)) s, \(f(b.energyMilliwattHours, 2)) mWh; "
                + "on-time \(f(share(r, b) * 100, 1)) % of always-on, recall \(f(match.recall, 3))"
        }
        return line
    }
}
