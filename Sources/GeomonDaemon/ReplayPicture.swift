public import GeomonCore
public import GeomonStore
public import GeomonPictures
import GeomonEvaluation

/// The pictures of `geomon replay --svg` and `geomon events --db --svg` (docs/pictures.md).
///
/// Both draw the receiver from its switches: replay from its run, `events` from the
/// database's receiver log (written by `geomon run` and `geomon replay --db` alike). A
/// database without one draws its fixes with the receiver's state unknown.
public enum ReplayPicture {
    /// The replay's picture: every recorded fix coloured by the receiver's state, the policy's
    /// intervals and reasons, the run's events and, with a comparison, the baseline's.
    ///
    /// The recording is read three times and only the points drawn are held
    /// (`RunPicture.reducedInput`): the picture of a year of fixes takes the memory of what it draws.
    public static func svg(_ run: ReplayRun, title: String) -> String {
        let index = run.index
        let intervals = run.receiverIntervals
        let states = RunPicture.IntervalLookup(intervals)
        let input = RunPicture.reducedInput(
            title: title,
            fences: run.profile.fencesWithShapes,
            receiverIntervals: intervals,
            events: run.events,
            baselineEvents: run.baseline?.receiver.events
        ) { withDistances, body in
            for fix in run.recording.fixes() {
                body(states.trackPoint(fix, nearestBoundaryMeters: withDistances ? index.nearestBoundary(to: fix.coordinate)?.signedDistanceMeters : nil))
            }
        }
        return RunPicture.render(input).svg
    }

    /// The picture of a database: its stored fixes and events, the receiver from its log,
    /// fences from `profile` if given. The fixes are read from the store four times and only the
    /// points drawn are held (`RunPicture.reducedInput`).
    public static func svg(store: EventStore, profile: Profile?, title: String) throws -> String {
        let events = try store.eventLog.events().map(\.event)
        let switches = try store.receiverSwitchLog.all()
        // The span of the fixes and, for each switch-on, the first GNSS fix at or after it
        // (all `intervals` asks of the GNSS fix times).
        let ons = switches.filter(\.on).map(\.time).sorted()
        var first: UTCTime?, last: UTCTime?
        var firstFixTimes: [UTCTime] = []
        var next = 0
        try store.fixLog.forEach { fix in
            if first == nil { first = fix.time }
            last = fix.time
            guard fix.source == .gnss else { return }
            while next < ons.count, ons[next] <= fix.time {
                if firstFixTimes.last != fix.time { firstFixTimes.append(fix.time) }
                next += 1
            }
        }
        var intervals: [RunPicture.ReceiverInterval] = []
        if let first, let last, !switches.isEmpty {
            let start = min(first, switches[0].time), end = max(last, switches[switches.count - 1].time)
            intervals = Self.intervals(switches: switches, gnssFixTimes: firstFixTimes, start: start, end: end)
        }
        let index = profile.map { $0.makeIndex() }
        let states = RunPicture.IntervalLookup(intervals, uncovered: switches.isEmpty ? .unknown : .on)
        return try RunPicture.render(RunPicture.reducedInput(
            title: title,
            fences: profile?.fencesWithShapes ?? [],
            receiverIntervals: intervals,
            events: events
        ) { withDistances, body in
            try store.fixLog.forEach { fix in
                body(states.trackPoint(fix, nearestBoundaryMeters: withDistances ? index?.nearestBoundary(to: fix.coordinate)?.signedDistanceMeters : nil))
            }
        }).svg
    }

    /// Receiver intervals from its switches over `start...end`: acquiring from a switch-on to
    /// the first GNSS fix after it, on until the switch-off, off in between; each with the
    /// reason of the switch that began it. Every switch begins an interval, of no length when
    /// the next switch came at the same instant, so the picture counts the wakes the energy
    /// report counts; a switch-off while off (a still sensor taking over a sleep) splits the
    /// off time at its new reason. `gnssFixTimes` are sorted.
    public static func intervals(switches: [ReceiverSwitch], gnssFixTimes: [UTCTime], start: UTCTime, end: UTCTime) -> [RunPicture.ReceiverInterval] {
        var out: [RunPicture.ReceiverInterval] = []
        var onAt: UTCTime?
        var onReason = ""
        var offAt = start
        var offReason = ""
        func close(at t: UTCTime) {
            guard let since = onAt else { return }
            // First GNSS fix in [since, t].
            var lo = 0, hi = gnssFixTimes.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if gnssFixTimes[mid] < since { lo = mid + 1 } else { hi = mid }
            }
            let first = lo < gnssFixTimes.count && gnssFixTimes[lo] <= t ? gnssFixTimes[lo] : t
            if first > since { out.append(.init(start: since, end: first, state: .acquiring, reason: onReason)) }
            // A switch-on is a wake even when the receiver went off again at once (the start's
            // first fix in hand): an interval of no length keeps the count equal to the report's.
            if t > first || first == since { out.append(.init(start: first, end: t, state: .on, reason: onReason)) }
            onAt = nil
            offAt = t
        }
        for change in switches {
            if change.on {
                guard onAt == nil else { continue }
                // Off, then on again at the same instant, is still a wake after an off.
                if change.time > offAt || !out.isEmpty { out.append(.init(start: offAt, end: change.time, state: .off, reason: offReason)) }
                onAt = change.time
                onReason = change.reason
            } else {
                if onAt == nil, change.time > offAt {
                    // Off already, for a new reason (a still sensor taking over a sleep): the
                    // off time is split where the reason changed.
                    out.append(.init(start: offAt, end: change.time, state: .off, reason: offReason))
                    offAt = change.time
                }
                close(at: change.time)
                offReason = change.reason
            }
        }
        if onAt != nil {
            close(at: end)
        } else if end > offAt {
            out.append(.init(start: offAt, end: end, state: .off, reason: offReason))
        }
        return out
    }
}
