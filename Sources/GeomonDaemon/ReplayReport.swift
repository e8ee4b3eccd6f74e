import GeomonCore
import Foundation

/// The energy report of a powered replay (`--report FILE`, the table, the summary line).
///
/// JSON keys, in this order: `profile`, `mode`, `always_on`, then `EnergyReport`'s (`track_s`,
/// `fixes_used`, `gnss_on_s`, `gnss_acquire_s`, `gnss_track_s`, `duty_cycle`, `wakeups`,
/// `energy_mwh`, `events`), `fixes_recorded`, `fixes_withheld`, `on_by_reason` (on-time seconds by
/// reason, `OnTimeLedger`); with `--compare-always-on` also
/// `on_time_share` (of always-on), `baseline` (the same members for the always-on run), `match`
/// (`recall`, `extra`, `latency_s_p50`, `latency_s_p95`, `missed`, `latencies_s`: every matched
/// event's latency, in baseline order) and `oracle` (`crossings`,
/// `gnss_on_s`, `energy_mwh`). Fixed decimals, no clock: byte-identical for the same input.
public enum ReplayReport {
    public static func json(_ run: ReplayPower) -> String {
        var lines: [String] = [
            "\"profile\": \(quoted(run.profile.name))",
            "\"mode\": \(quoted(run.profile.mode.rawValue))",
            "\"always_on\": \(run.options.alwaysOn)",
            run.result.report.jsonMembers,
            "\"fixes_recorded\": \(run.track.count)",
            "\"fixes_withheld\": \(run.track.count - run.result.usage.fixesDelivered)",
            "\"on_by_reason\": {" + run.result.onTime.entries.map { "\(quoted($0.label)): \(fixed($0.seconds, 3))" }.joined(separator: ", ") + "}",
        ]
        if let baseline = run.baseline, let match = run.match, let oracle = run.oracle {
            let share = baseline.report.gnssOnSeconds > 0 ? run.result.report.gnssOnSeconds / baseline.report.gnssOnSeconds : 0
            lines.append("\"on_time_share\": \(fixed(share, 4))")
            lines.append("\"baseline\": {\(baseline.report.jsonMembers)}")
            let latencies = match.latenciesSeconds.map { fixed($0, 3) }.joined(separator: ", ")
            lines.append("\"match\": {\(match.jsonMembers), \"missed\": \(match.missed.count), \"latencies_s\": [\(latencies)]}")
            lines.append("\"oracle\": {\(oracle.jsonMembers)}")
        }
        return "{\n  " + lines.joined(separator: ",\n  ") + "\n}\n"
    }

    /// The same figures as a readable table (`--format text`).
    public static func table(_ run: ReplayPower) -> String {
        let r = run.result.report
        let b = run.baseline?.report
        var rows: [(String, String, String)] = [
            ("", run.options.alwaysOn ? "always-on" : "policy", b == nil ? "" : "always-on"),
            ("track s", fixed(r.trackSeconds, 1), b.map { fixed($0.trackSeconds, 1) } ?? ""),
            ("fixes used", "\(r.fixesUsed) of \(run.track.count)", b.map { "\($0.fixesUsed)" } ?? ""),
            ("gnss on s", fixed(r.gnssOnSeconds, 1), b.map { fixed($0.gnssOnSeconds, 1) } ?? ""),
            ("  acquiring s", fixed(r.acquireSeconds, 1), b.map { fixed($0.acquireSeconds, 1) } ?? ""),
            ("  tracking s", fixed(r.trackingSeconds, 1), b.map { fixed($0.trackingSeconds, 1) } ?? ""),
            ("duty cycle %", fixed(r.dutyCycle * 100, 1), b.map { fixed($0.dutyCycle * 100, 1) } ?? ""),
            ("wakeups", "\(r.wakeups)", b.map { "\($0.wakeups)" } ?? ""),
            ("energy mWh", fixed(r.energyMilliwattHours, 2), b.map { fixed($0.energyMilliwattHours, 2) } ?? ""),
            ("events", "\(r.events)", b.map { "\($0.events)" } ?? ""),
        ]
        for entry in run.result.onTime.entries {
            rows.append(("  s \(entry.label)", fixed(entry.seconds, 1), ""))
        }
        if let b, let match = run.match, let oracle = run.oracle {
            let share = b.gnssOnSeconds > 0 ? r.gnssOnSeconds / b.gnssOnSeconds : 0
            rows.append(("on-time % of always-on", fixed(share * 100, 1), ""))
            rows.append(("recall", fixed(match.recall, 3), ""))
            rows.append(("extra events", "\(match.extra)", ""))
            rows.append(("latency p50 / p95 s", "\(match.latencyP50Seconds.map { fixed($0, 1) } ?? "-") / \(match.latencyP95Seconds.map { fixed($0, 1) } ?? "-")", ""))
            rows.append(("oracle bound: crossings", "\(oracle.crossings)", ""))
            rows.append(("oracle bound: gnss on s", fixed(oracle.gnssOnSeconds, 1), ""))
            rows.append(("oracle bound: energy mWh", fixed(oracle.energyMilliwattHours, 2), ""))
        }
        let w0 = rows.map(\.0.count).max() ?? 0
        let w1 = rows.map(\.1.count).max() ?? 0
        return rows.map { row in
            let line = row.0.padding(toLength: w0, withPad: " ", startingAt: 0) + "  "
                + String(repeating: " ", count: w1 - row.1.count) + row.1
                + (row.2.isEmpty ? "" : "  " + row.2)
            return line.trimmingTrailingSpaces
        }.joined(separator: "\n") + "\n"
    }

    /// The policy's actions and the delivered GNSS fixes in time order, one per line
    /// (`--policy-log`): `TIME ACTION REASON…` or `TIME fix lat lon acc=…`. Deterministic.
    public static func policyLog(_ run: ReplayPower) -> String {
        // At the same instant a fix comes first: the policy's actions then are its answer to it.
        var lines: [(time: UTCTime, order: Int, text: String)] = []
        for (i, fix) in run.result.delivered.enumerated() where fix.source == .gnss {
            let c = fix.coordinate
            lines.append((fix.time, i, "\(fix.time) fix \(fixed(c.latitude, 7)) \(fixed(c.longitude, 7)) acc=\(fixed(fix.horizontalAccuracyMeters, 1))m"))
        }
        let offset = lines.count
        for (i, timed) in run.result.actions.enumerated() {
            lines.append((timed.time, offset + i, "\(timed.time) \(timed.action)"))
        }
        lines.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        return lines.map(\.text).joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
    }

    /// One line for stderr at the end of a replay.
    public static func summaryLine(_ run: ReplayPower) -> String {
        let r = run.result.report
        var line = "replay: energy: gnss on \(fixed(r.gnssOnSeconds, 1)) s of \(fixed(r.trackSeconds, 1)) s "
            + "(duty \(fixed(r.dutyCycle * 100, 1)) %), \(r.wakeups) wakeups, \(r.fixesUsed) of \(run.track.count) fixes used, "
            + "\(fixed(r.energyMilliwattHours, 2)) mWh"
        if let b = run.baseline?.report, let match = run.match {
            let share = b.gnssOnSeconds > 0 ? r.gnssOnSeconds / b.gnssOnSeconds : 0
            line += "; always-on \(fixed(b.gnssOnSeconds, 1)) s, \(fixed(b.energyMilliwattHours, 2)) mWh; "
                + "on-time \(fixed(share * 100, 1)) % of always-on, recall \(fixed(match.recall, 3))"
        }
        return line
    }

    /// `value` with `digits` decimals, C locale (deterministic).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
        let text = String(format: "%.\(digits)f", value)
        return text == "-0" || text.hasPrefix("-0.") && Double(text) == 0 ? String(text.dropFirst()) : text
    }

    static func quoted(_ text: String) -> String {
        JSONLiteral.string(text)
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
