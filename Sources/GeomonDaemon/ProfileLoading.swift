public import GeomonCore
public import GeomonConfig
public import GeomonStore

/// Why a profile could not be loaded.
public struct ProfileLoadError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var message: String
    /// Every diagnostic found (errors and warnings), compiler-style when rendered.
    public var diagnostics: [Diagnostic]
    /// True when the file is missing or unreadable (exit 66); false when invalid (exit 65).
    public var isMissing: Bool

    public init(path: String, message: String, diagnostics: [Diagnostic] = [], isMissing: Bool) {
        self.path = path
        self.message = message
        self.diagnostics = diagnostics
        self.isMissing = isMissing
    }

    /// The diagnostics as `validate` prints them, then one summary line.
    public var description: String {
        if diagnostics.isEmpty { return "\(path): \(message)" }
        return DiagnosticRenderer.text(diagnostics) + "\(path): \(message)"
    }

    /// As every command prints it on stderr: the diagnostics as `validate` prints them, then
    /// `geomon: error: …` (the message names the path).
    public var commandLineText: String {
        (diagnostics.isEmpty ? "" : DiagnosticRenderer.text(diagnostics)) + "geomon: error: \(message)"
    }
}

/// What a profile's warnings are: the diagnostics, and the fences used despite ring defects.
public struct ProfileWarnings: Sendable {
    public var diagnostics: [Diagnostic]
    public var repairedFences: [String]

    /// One line for the commands and the daemon other than `validate`, which alone lists the
    /// warnings: "3 warnings in P: 'geomon validate P' lists them".
    public func summary(profilePath: String) -> String {
        let n = diagnostics.count
        return "\(n) warning\(n == 1 ? "" : "s") in \(profilePath): 'geomon validate \(profilePath)' lists them"
    }
}

/// The ONE place the daemon and the commands load a profile: YAML through `ProfileLoader`,
/// with every check `geomon validate` makes. Warnings go to `warn`. `insecurePermissions`
/// (`--insecure-permissions`) skips the permission, ownership and symlink checks of the
/// profile and the files it names (docs/security.md).
public func loadProfile(path: String, insecurePermissions: Bool = false, warn: (ProfileWarnings) -> Void = { _ in }) throws(ProfileLoadError) -> Profile {
    let result: ProfileLoadResult
    do {
        result = try ProfileLoader.load(path: path, trust: FileTrust(enforced: !insecurePermissions))
    } catch {
        throw ProfileLoadError(path: path, message: error.description, isMissing: true)
    }
    let errors = result.diagnostics.filter { $0.severity == .error }
    guard let profile = result.profile, errors.isEmpty else {
        throw ProfileLoadError(
            path: path,
            message: "invalid profile (\(errors.count) error\(errors.count == 1 ? "" : "s"); run 'geomon validate \(path)')",
            diagnostics: result.diagnostics,
            isMissing: false
        )
    }
    let warnings = result.diagnostics.filter { $0.severity == .warning }
    if !warnings.isEmpty { warn(ProfileWarnings(diagnostics: warnings, repairedFences: result.repairedFences)) }
    return profile
}

extension Profile {
    /// The profile's own fences and, after them, `pushed` (fences pushed over MQTT) and
    /// `placed` (`geomon fences here`): a pushed fence whose id a profile fence or a placed one
    /// has is left out and handed to `refused` (a server's waypoint never replaces either), a
    /// placed one with a profile fence's id to `refusedPlaced`. Fences pushed before (`Fence.pushed`) are replaced by
    /// `pushed`. Fences streamed from files keep their geometry in the index only; the index is
    /// built again for the merged set.
    public func withPushed(_ pushed: [PushedFence], placed: [PlacedFence] = [], refused: (PushedFence) -> Void = { _ in },
                           refusedPlaced: (PlacedFence) -> Void = { _ in }) -> Profile {
        let own = fences.indices.filter { fences[$0].pushed == nil }
        guard !pushed.isEmpty || !placed.isEmpty || own.count != fences.count else { return self }
        var ids = Set(own.map { fences[$0].id })
        var merged = own.map { fences[$0] }
        var shapes = own.map { shape(of: $0) }
        /// Adds a circle unless its id is taken (then `refuse` is told).
        func add(_ fence: Fence, _ center: Coordinate, _ radius: Double, refuse: () -> Void) {
            guard !ids.contains(fence.id) else { return refuse() }
            merged.append(fence)
            shapes.append(.circle(center: center, radiusMeters: radius))
        }
        // A fence placed on the device (the anchor watch) outranks a pushed one with its id:
        // a server's waypoint never silently moves it.
        let placedIDs = Set(placed.map(\.fenceID)).subtracting(ids)
        for fence in pushed {
            if placedIDs.contains(fence.fenceID) {
                refused(fence)
            } else {
                add(fence.fence, fence.center, fence.radiusMeters) { refused(fence) }
                ids.insert(fence.fenceID)
            }
        }
        for fence in placed { add(fence.fence, fence.center, fence.radiusMeters) { refusedPlaced(fence) } }
        var profile = self
        profile.setFences(merged, index: FenceIndex(shapes: shapes))
        return profile
    }
}

/// `profile` with the fences pushed over MQTT that `store` holds, in place of any it had, when
/// it accepts commands (`publish.mqtt.commands`); without, stored ones are kept but not
/// monitored (one warning). A pushed fence with a profile or placed fence's id is left out with
/// a warning.
/// `geomon run` at start and at every reload, and after every command that changed them.
public func withPushedFences(_ profile: Profile, store: EventStore, log: Log) throws -> Profile {
    var pushed = try store.pushedFenceList.all()
    let placed = try store.placedFenceList.all()
    if !placed.isEmpty { log.info("fences placed at run time", ["placed": placed.map(\.fenceID).joined(separator: ",")]) }
    if profile.publish.mqtt?.commands != true {
        if !pushed.isEmpty {
            log.warning("fences pushed over MQTT are stored but not monitored: publish.mqtt.commands is off", ["pushed": "\(pushed.count)"])
        }
        pushed = []
    } else if !pushed.isEmpty {
        log.info("fences pushed over MQTT", ["pushed": "\(pushed.count)"])
    }
    return profile.withPushed(pushed, placed: placed, refused: { fence in
        log.warning("a pushed fence has the id of a profile fence or of a placed one and is not monitored", ["fence.id": fence.fenceID, "pushed": fence.origin])
    }, refusedPlaced: { fence in
        log.warning("a placed fence has the id of a profile fence and is not monitored", ["fence.id": fence.fenceID, "placed": fence.origin])
    })
}
