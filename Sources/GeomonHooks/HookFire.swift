public import GeomonCore
import GeomonFormat

/// `geomon hooks fire`: runs a profile's hooks once with a synthetic event (`GEOMON_TEST=1`),
/// so users can try their scripts without moving. No store, no retries.
public enum HookFire {
    public enum FireError: Error, CustomStringConvertible, Equatable {
        case unknownFence(String, known: [String])
        case fenceRequired(EventKind)
        case fenceNotCarried(EventKind)

        public var description: String {
            switch self {
            case .unknownFence(let id, let known):
                let list = known.isEmpty ? "the profile has no fences" : "known fences: \(known.joined(separator: ", "))"
                return "no fence with id '\(id)' in the profile (\(list))"
            case .fenceRequired(let kind):
                return "\(kind.rawValue.first.map { "aeiou".contains($0) } == true ? "an" : "a") '\(kind.rawValue)' event needs --fence ID"
            case .fenceNotCarried(let kind):
                return "a '\(kind.rawValue)' event carries no fence: leave out --fence"
            }
        }
    }

    /// One hook's outcome.
    public struct Outcome: Sendable {
        public var argv: [String]
        public var result: HookResult

        public init(argv: [String], result: HookResult) {
            self.argv = argv
            self.result = result
        }
    }

    /// A synthetic event of `kind` at `fenceID` (its centre, or the first polygon's first vertex).
    public static func syntheticEvent(profile: Profile, kind: EventKind, fenceID: String?, now: UTCTime) throws -> GeoEvent {
        var coordinate = Coordinate(latitude: 0, longitude: 0)
        var fenceName: String?
        // A fence's events need one; a visit's may name one; motion, trips, modes and
        // locations carry none (docs/hooks.md).
        let needsFence: Set<EventKind> = [.enter, .exit, .dwell, .approach, .overspeed, .overspeedEnd]
        if fenceID != nil, !needsFence.contains(kind), kind != .arrival, kind != .departure {
            throw FireError.fenceNotCarried(kind)
        }
        if let fenceID {
            guard let number = profile.fences.firstIndex(where: { $0.id == fenceID }) else {
                throw FireError.unknownFence(fenceID, known: profile.fences.map(\.id))
            }
            fenceName = profile.fences[number].name
            switch profile.shape(of: number) {
            case .circle(let center, _): coordinate = center
            case .polygons(let polygons): coordinate = polygons.first?.shell.first ?? coordinate
            case .corridor(let lines, _): coordinate = lines.first?.first ?? coordinate
            }
        } else if needsFence.contains(kind) {
            throw FireError.fenceRequired(kind)
        }
        var event = GeoEvent(
            id: "test-\(kind.rawValue)-\(fenceID ?? "location")-\(now.millisecondsSince1970)",
            kind: kind, fenceID: fenceID, fenceName: fenceName, time: now, coordinate: coordinate,
            accuracyMeters: 5, rule: .recorded("geomon hooks fire (test event)")
        )
        if kind == .approach {
            // The fence's smallest band reached at 10 m/s, so a hook sees every variable.
            let settings = profile.fences.first { $0.id == fenceID }?.approach
            let etaBand = settings?.etaBands.last
            let distanceBand = settings?.bandsMeters.last ?? (etaBand == nil ? 1000 : nil)
            let band = distanceBand ?? (etaBand?.secondsValue ?? 100) * 10
            let lower = max(0, band - 15)
            let maxSpeed = profile.policy.plannedBounds.maxSpeedMetersPerSecond
            event.approach = EventRule.Approach(
                bandMeters: distanceBand, bandETA: etaBand, distanceMeters: band, distanceLowerBoundMeters: lower, direction: .towards,
                closingSpeedMetersPerSecond: 10, eta: .milliseconds(Int64(band * 100)),
                etaLowerBound: maxSpeed > 0 ? .milliseconds(Int64(lower / maxSpeed * 1000)) : nil, samples: 2, span: .seconds(10))
        }
        return event
    }

    /// Runs every hook for `event.kind` concurrently, once; outcomes in profile order.
    public static func run(profile: Profile, event: GeoEvent, runner: HookRunner = HookRunner(), home: String? = nil) -> [Outcome] {
        let targets = HookCatalog.targets(for: event.kind, in: profile.hooks)
        let inbox = CompletionInbox<(Int, HookResult)>(onActivity: nil)
        for (index, target) in targets.enumerated() {
            let invocation = HookEnvironment.invocation(
                argv: target.spec.exec, timeout: target.spec.timeout, event: event, profileName: profile.name,
                profileDirectory: profile.directory, attempt: 1, isTest: true, home: home, extra: target.spec.environment
            )
            runner.start(invocation) { inbox.post((index, $0)) }
        }
        var results: [Int: HookResult] = [:]
        while results.count < targets.count {
            inbox.wait(timeout: .seconds(60))
            for (index, result) in inbox.takeAll() { results[index] = result }
        }
        return targets.enumerated().compactMap { index, target in
            results[index].map { Outcome(argv: target.spec.exec, result: $0) }
        }
    }
}

extension HookFire {
    /// What `geomon hooks fire` prints: one status line per hook, then an excerpt of its output
    /// (`OutputText.excerpt`: at most 20 lines of at most 300 bytes per stream), indented.
    public static func render(_ outcomes: [Outcome]) -> String {
        var out = ""
        for outcome in outcomes {
            let command = JSON.array(outcome.argv)
            let status = outcome.result.succeeded ? "ok  " : "FAIL"
            out += "\(status) \(command): \(outcome.result.summary)\n"
            for (label, bytes, truncated) in [("stdout", outcome.result.stdout, outcome.result.stdoutTruncated),
                                              ("stderr", outcome.result.stderr, outcome.result.stderrTruncated)] where !bytes.isEmpty {
                for line in OutputText.excerpt(bytes) {
                    out += "  \(label)| \(line)\n"
                }
                if truncated { out += "  \(label)| … (output truncated)\n" }
            }
        }
        return out
    }
}
