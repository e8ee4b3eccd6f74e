import Foundation
import GeomonCore
import GeomonDaemon
import GeomonSources
import GeomonStore

/// `geomon replay`'s power options (issue 6, issue 9): parsed here, run by `ReplayPower`,
/// `ReplayReport` and `ReplayPicture` in GeomonDaemon.
struct ReplayPowerOptions {
    static let help = """
      --always-on         keep the receiver on (every recorded fix is delivered)
      --compare-always-on also run always-on and compare: the report gains `baseline`,
                          `match` (recall, extra, latency p50/p95) and the `oracle` bound
      --coarse FILE       a recorded coarse track (any track format); default: derived from
                          the track every sources.coarse.interval, seeded (--seed N, default 1)
      --report FILE       write the energy report as JSON (FILE `-`: stdout, after the events);
                          with --format text the report is the readable table instead
      --svg FILE          draw the run: map and timeline (docs/pictures.md)
      --policy-log FILE   every policy action with its time and reason, and every GNSS fix
                          the receiver delivered, one per line (why the receiver was on)
      --interpolate-gaps S
                          the receiver model bridges recorded gaps up to S seconds by
                          interpolation (default 10; larger: a what-if for sparse logs)
    """

    var options = ReplayPower.Options()
    var coarsePath: String?
    var reportPath: String?
    var svgPath: String?
    var policyLogPath: String?
    var reportAsText = false

    /// Parses the options (before `positionals()`); `formatText` is replay's `--format text`.
    static func parse(_ arguments: inout Arguments) throws -> ReplayPowerOptions {
        var parsed = ReplayPowerOptions()
        parsed.options.alwaysOn = arguments.flag("--always-on")
        parsed.options.compareAlwaysOn = arguments.flag("--compare-always-on")
        if parsed.options.alwaysOn, parsed.options.compareAlwaysOn {
            throw UsageError("'--always-on' and '--compare-always-on' exclude each other")
        }
        parsed.coarsePath = try arguments.option("--coarse")
        if let seed = try arguments.intOption("--seed", range: 0...Int.max) { parsed.options.seed = UInt64(seed) }
        parsed.reportPath = try arguments.option("--report")
        parsed.svgPath = try arguments.option("--svg")
        parsed.policyLogPath = try arguments.option("--policy-log")
        if let gap = try arguments.doubleOption("--interpolate-gaps", range: 0...86_400) {
            parsed.options.interpolationMaxGap = .milliseconds(Int64((gap * 1000).rounded()))
        }
        return parsed
    }

    /// Runs the policy over the recorded fixes; nil (after an error on stderr) with the exit code.
    func prepare(profile: Profile, fixes: [Fix]) -> Result<ReplayPower, ExitCode> {
        var options = options
        if let coarsePath {
            do {
                options.coarse = try TrackReader.read(path: coarsePath).fixes
            } catch {
                writeStderr("geomon: error: \(error)")
                return .failure(error.isMissing ? .noInput : .dataError)
            }
        }
        return .success(ReplayPower(profile: profile, fixes: fixes, options: options))
    }

    /// After the replay: the receiver intervals into the database, the report, the picture,
    /// the summary line on stderr. Returns an exit code (0 when all went well).
    func finish(_ run: ReplayPower, store: EventStore, title: String, formatText: Bool) -> Int32 {
        do {
            try ReplayPicture.storeIntervals(run, in: store)
        } catch {
            writeStderr("geomon: error: \(error)")
            return ExitCode.failure.code
        }
        if let reportPath {
            let text = formatText ? ReplayReport.table(run) : ReplayReport.json(run)
            if reportPath == "-" {
                print(text, terminator: "")
                fflush(nil)
            } else if let failure = write(text, to: reportPath) {
                return failure
            }
        }
        if let svgPath, let failure = write(ReplayPicture.svg(run, title: title), to: svgPath) {
            return failure
        }
        if let policyLogPath, let failure = write(ReplayReport.policyLog(run), to: policyLogPath) {
            return failure
        }
        writeStderr(ReplayReport.summaryLine(run))
        return 0
    }

    private func write(_ text: String, to path: String) -> Int32? {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            return nil
        } catch {
            writeStderr("geomon: error: cannot write \(path): \((error as NSError).localizedDescription)")
            return ExitCode.failure.code
        }
    }
}
