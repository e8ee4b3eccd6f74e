public import GeomonCore
public import GeomonStore
public import GeomonPictures
import GeomonEvaluation

/// The pictures of `geomon replay --svg` and `geomon events --db --svg` (docs/pictures.md).
///
/// Replay stores the receiver intervals of its run in the database's key-value table under
/// `receiverIntervalsKey` (one line per interval: `start_ms end_ms state reason`), so `events
/// --db --svg` draws the receiver as the policy ran it; a database without them (e.g. from
/// `geomon run`) draws every stored fix as seen with the receiver on.
public enum ReplayPicture {
    public static let receiverIntervalsKey = "replay.receiver_intervals"

    /// The replay's picture: every recorded fix coloured by the receiver's state, the policy's
    /// intervals and reasons, the run's events and, with a comparison, the baseline's.
    public static func svg(_ run: ReplayRun, title: String) -> String {
        let index = run.index
        let intervals = run.receiverIntervals
        let input = RunPicture.Input(
            title: title,
            fences: run.profile.fences,
            track: RunPicture.trackPoints(fixes: run.track, intervals: intervals,
                                          nearestBoundaryMeters: { index.nearestBoundary(to: $0)?.signedDistanceMeters }),
            receiverIntervals: intervals,
            events: run.events,
            baselineEvents: run.baseline?.receiver.events
        )
        return RunPicture.render(input).svg
    }

    /// The picture of a database: its stored fixes and events, fences from `profile` if given.
    public static func svg(store: EventStore, profile: Profile?, title: String) throws -> String {
        var fixes: [Fix] = []
        try store.forEachFix { fixes.append($0) }
        let events = try store.events().map(\.event)
        let intervals = decode(try store.value(forKey: receiverIntervalsKey) ?? "")
        let index = profile.map { FenceIndex(shapes: $0.fences.map(\.shape)) }
        let input = RunPicture.Input(
            title: title,
            fences: profile?.fences ?? [],
            track: RunPicture.trackPoints(fixes: fixes, intervals: intervals,
                                          nearestBoundaryMeters: { point in index?.nearestBoundary(to: point)?.signedDistanceMeters }),
            receiverIntervals: intervals,
            events: events
        )
        return RunPicture.render(input).svg
    }

    /// Stores the run's receiver intervals in the database (for `events --db --svg`).
    public static func storeIntervals(_ run: ReplayRun, in store: EventStore) throws {
        try store.setValue(encode(run.receiverIntervals), forKey: receiverIntervalsKey)
    }

    static func encode(_ intervals: [RunPicture.ReceiverInterval]) -> String {
        intervals.map { i in
            "\(i.start.millisecondsSince1970) \(i.end.millisecondsSince1970) \(i.state.rawValue) "
                + i.reason.replacingNewlines
        }.joined(separator: "\n")
    }

    static func decode(_ text: String) -> [RunPicture.ReceiverInterval] {
        text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count >= 3, let start = Int64(parts[0]), let end = Int64(parts[1]),
                  let state = RunPicture.ReceiverState(rawValue: String(parts[2])) else { return nil }
            return RunPicture.ReceiverInterval(
                start: UTCTime(millisecondsSince1970: start), end: UTCTime(millisecondsSince1970: end),
                state: state, reason: parts.count > 3 ? String(parts[3]) : ""
            )
        }
    }
}

extension String {
    fileprivate var replacingNewlines: String {
        String(map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
