public import GeomonCore

/// When the next heartbeat is due. Pure.
///
/// The first beat is `firstDelay` after start; afterwards one every `every`, measured from the
/// previous beat. A beat that is overdue (the daemon was busy or suspended) is due now, once:
/// missed beats are never replayed.
public enum HeartbeatSchedule {
    public static func nextBeat(lastBeat: UTCTime?, startedAt: UTCTime, now: UTCTime, every: Duration, firstDelay: Duration) -> UTCTime {
        guard let lastBeat else { return max(startedAt + firstDelay, startedAt) }
        let interval = max(every, .seconds(1))
        let due = lastBeat + interval
        return due <= now ? now : due
    }
}
