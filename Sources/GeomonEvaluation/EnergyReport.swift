public import GeomonCore

/// The energy figures of one replay run (the `--report` JSON's core fields).
public struct EnergyReport: Hashable, Sendable {
    /// Track duration: last recorded fix time minus the first.
    public var trackSeconds: Double
    /// Recorded GNSS fixes the receiver delivered.
    public var fixesUsed: Int
    /// GNSS fixes the receiver delivered that it interpolated between recorded ones.
    public var fixesInterpolated: Int
    public var gnssOnSeconds: Double
    /// Part of `gnssOnSeconds` spent acquiring (switch-on to first fix).
    public var acquireSeconds: Double
    /// Part of `gnssOnSeconds` spent tracking (first fix to switch-off).
    public var trackingSeconds: Double
    /// `gnssOnSeconds / trackSeconds`.
    public var dutyCycle: Double
    /// Times the receiver was switched on.
    public var wakeups: Int
    /// Off for the policy but still powered: the power method's release after each switch-off
    /// (`watch`: gpsd closes the device 60 s after the watch ends).
    public var unreleasedSeconds: Double
    /// `gnssOnSeconds + unreleasedSeconds`: what the receiver really ran.
    public var poweredSeconds: Double { gnssOnSeconds + unreleasedSeconds }
    /// `(acquire·power_acquire + (tracking + unreleased)·power_track) / 3600`.
    public var energyMilliwattHours: Double
    /// Number of events decided.
    public var events: Int
    /// The power method the figures assume (`sources.gnss.power`).
    public var powerMethod: String
    /// The restart class the figures assume, and the time to first fix of a wake within
    /// `hot_window` it gives (`ReceiverSettings.restarting`).
    public var restart: RestartClass
    public var restartTTFFSeconds: Double

    public init(trackSeconds: Double, usage: ReceiverUsage, settings: ReceiverSettings, events: Int, powerMethod: String,
                restart: RestartClass = .hot) {
        self.trackSeconds = trackSeconds
        fixesUsed = usage.fixesDelivered - usage.fixesInterpolated
        fixesInterpolated = usage.fixesInterpolated
        gnssOnSeconds = usage.on.secondsValue
        acquireSeconds = usage.acquire.secondsValue
        trackingSeconds = usage.track.secondsValue
        dutyCycle = trackSeconds > 0 ? gnssOnSeconds / trackSeconds : 0
        wakeups = usage.wakeups
        unreleasedSeconds = usage.unreleased.secondsValue
        self.powerMethod = powerMethod
        self.restart = restart
        restartTTFFSeconds = settings.ttffHot.secondsValue
        energyMilliwattHours = usage.energyMilliwattHours(settings)
        self.events = events
    }

}
