public import GeomonCore
public import GeomonStore

/// A source the profile decides — the motion sensor, the coarse command, the GeoClue client —
/// held in the driver's list across reloads. A reload that changes its settings (`identity`)
/// stops the one running and builds the new one, or none when the profile has none any more;
/// `replaced` then tells the new machine what the change means (a new motion sensor: silent
/// until it speaks). Unchanged, the source is told of the reload as any service is. Until a
/// reload, it is the source it holds: every role is passed through.
public final class SourceSlot: EventSource, EffectSink {
    public let name: String
    private let identity: (Profile) -> String?
    private let build: (Profile) -> (any EventSource & EffectSink)?
    private let replaced: ((DriverContext, Profile, (any EventSource & EffectSink)?) -> Void)?
    private var current: String?
    /// The source in effect (nil: the profile has none, or it could not be built).
    public private(set) var source: (any EventSource & EffectSink)?

    /// - Parameters:
    ///   - identity: what builds the source from a profile (its settings as text); nil: none.
    ///   - build: the source for a profile whose identity is not nil.
    ///   - replaced: after a reload replaced the source: the new profile and source (nil: none).
    public init(name: String, profile: Profile, identity: @escaping (Profile) -> String?,
                build: @escaping (Profile) -> (any EventSource & EffectSink)?,
                replaced: ((DriverContext, Profile, (any EventSource & EffectSink)?) -> Void)? = nil) {
        self.name = name
        self.identity = identity
        self.build = build
        self.replaced = replaced
        current = identity(profile)
        source = current == nil ? nil : build(profile)
    }

    public var pollRequest: PollRequest? { source?.pollRequest }
    public var nextWake: Int64? { source?.nextWake }
    public var wakeClock: WakeClock { source?.wakeClock ?? .driver }

    public func start(_ driver: DriverContext) throws { try source?.start(driver) }
    public func stop(_ driver: DriverContext) { source?.stop(driver) }

    public func process(revents: Int16, _ driver: DriverContext) throws {
        try source?.process(revents: revents, driver)
    }

    public func perform(_ effect: Monitor.Effect, _ driver: DriverContext) throws {
        try source?.perform(effect, driver)
    }

    public func committed(_ events: [StoredEvent], _ driver: DriverContext) throws {
        try source?.committed(events, driver)
    }

    public func reloaded(_ profile: Profile, _ driver: DriverContext) throws {
        let next = identity(profile)
        guard next != current else {
            try source?.reloaded(profile, driver)
            return
        }
        source?.stop(driver)
        current = next
        source = next == nil ? nil : build(profile)
        try source?.start(driver)
        replaced?(driver, profile, source)
    }
}
