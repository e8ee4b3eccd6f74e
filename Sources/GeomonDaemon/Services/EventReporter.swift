#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
public import GeomonStore
import GeomonFormat

/// Says each committed event, each switch of the receiver and each held jump: a log line (`geomon run`), a line on stdout (`run
/// --print-events`: JSON; `replay`: text or JSON), after its commit.
public final class EventReporter: EffectSink {
    public let name = "events"
    public enum Output: Sendable {
        case none
        case json
        case text
    }

    private let output: Output
    private let log: Log?

    /// - Parameter log: where each event is logged (`geomon run`), or nil.
    public init(output: Output, log: Log?) {
        self.output = output
        self.log = log
    }

    /// The receiver's switches, held jumps and broken bounds, in the log.
    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        guard let log else { return }
        switch effect {
        case let .power(action):
            log.info("power", ["power.action": action.text])
        case let .held(fix):
            log.info("implausible jump held until confirmed", [
                "fix.lat": NumberText.short(fix.coordinate.latitude, 7), "fix.lon": NumberText.short(fix.coordinate.longitude, 7),
            ])
        case let .violated(v):
            log.warning("a fix broke the bounds the plan relied on; widened for the rest of the trip", [
                "violation": v.kind.rawValue, "observed_mps": NumberText.short(v.observedMetersPerSecond, 1),
                "distance_m": v.distanceMeters.map { NumberText.short($0, 0) } ?? "-",
                "seconds": v.seconds.map { NumberText.short($0, 1) } ?? "-",
                "observed_mps2": v.observedAcceleration.map { NumberText.short($0, 2) } ?? "-",
                "planned": v.planned.text, "widened": v.widened.text, "at": v.time.rfc3339,
            ])
        case let .ttffLearned(change):
            log.notice("the receiver's first fixes are consistently \(change.to < change.from ? "faster" : "slower") than planned: ttff_hot replaced", [
                "ttff_hot_s": NumberText.short(change.to.secondsValue, 3), "was_s": NumberText.short(change.from.secondsValue, 3),
                "measured_median_s": NumberText.short(change.measured.secondsValue, 3), "samples": "\(change.samples)",
            ])
        case .commit, .took, .dropped:
            break
        }
    }

    public func committed(_ events: [StoredEvent], _ driver: DriverContext) throws {
        var text = ""
        for stored in events {
            let event = stored.event
            log?.notice("event", [
                "event.type": event.kind.rawValue, "fence.id": event.fenceID ?? "-", "event.id": event.id,
                "event.time": event.time.rfc3339, "event.rule": event.rule.text,
            ])
            switch output {
            case .none: break
            case .json: text += EventEncoding.json(event) + "\n"
            case .text: text += EventEncoding.line(event, json: false) + "\n"
            }
        }
        if !text.isEmpty { StandardOutput.write(text) }
    }
}

/// Standard output, unbuffered: a pipe reader sees each line as it is written.
public enum StandardOutput {
    public static func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(n)
        }
    }
}
