/// What the fence index and the transition engine know about a fix, handed to the power policy.
///
/// Plain values, so a test can write one by hand and the shell can build one from the engine.
public struct FixContext: Hashable, Sendable {
    /// Unsigned distance (metres) from the fix to the nearest fence boundary found within
    /// `searchRadiusMeters`; nil when no boundary is that close.
    public var nearestBoundaryMeters: Double?
    /// How far the index looked. With no boundary found, the policy takes this as the distance.
    public var searchRadiusMeters: Double
    /// True when every fence near the fix is in a certain, confirmed state (no side in doubt).
    public var allCertain: Bool
    /// True when a transition waits for confirming fixes.
    public var transitionPending: Bool
    /// The earliest time a pending dwell becomes due, if any.
    public var earliestDwellDeadline: UTCTime?
    /// The first fix time of the pending change that started first (`transitionPending`).
    public var pendingSince: UTCTime?
    /// How many consecutive certain fixes that change has had so far.
    public var pendingCount: Int = 0
    /// When a change waits only for confirming fixes and the fix is certain for every fence
    /// whose change waits (other fences may be in doubt): how many more certain fixes confirm
    /// the earliest. nil when nothing is pending, during the start-up, or when the fix leaves
    /// a waiting change in doubt.
    public var fixesToSettle: Int?
    /// The engine has not established every side yet (its start-up, or a fence whose record is
    /// `unknown`): a crossing from there is confirmed silently under `initial: silent`, so no
    /// latency budget sleeps on it.
    public var sideUnknown = false
    /// Boundary clearance sampled ahead along the fix's course, for the heading bound.
    public var courseClearance: CourseClearance?
    /// When no boundary is within the search radius: the distance to the nearest one anywhere
    /// (`.infinity` without fences), for how long an outage may go unwatched; nil: unknown
    /// (the search radius stands in).
    public var boundaryBeyondSearchMeters: Double?
    /// Inside a fence with `speed_limit:` whose limit the device could pass before the next
    /// fix of a sleep (`SpeedWatch`): the receiver stays on.
    public var speedWatch = false
    /// With `active:` windows: the nearest boundary within the search radius with a fence
    /// outside its windows counted as at least as far as a drift at `creep_speed` goes until
    /// it opens (`nearestBoundaryMeters` counts it at `max_speed`); what a device the motion
    /// sensor says is still is checked back on from (`PowerPolicy.stillCheckAt`). nil: no
    /// schedules, or no fence near.
    public var creepDistanceMeters: Double?

    public init(
        nearestBoundaryMeters: Double?,
        searchRadiusMeters: Double,
        allCertain: Bool = true,
        transitionPending: Bool = false,
        earliestDwellDeadline: UTCTime? = nil,
        courseClearance: CourseClearance? = nil,
        boundaryBeyondSearchMeters: Double? = nil
    ) {
        self.boundaryBeyondSearchMeters = boundaryBeyondSearchMeters
        self.nearestBoundaryMeters = nearestBoundaryMeters
        self.searchRadiusMeters = searchRadiusMeters
        self.allCertain = allCertain
        self.transitionPending = transitionPending
        self.earliestDwellDeadline = earliestDwellDeadline
        self.courseClearance = courseClearance
    }

    /// A lower bound of the distance to any boundary: the nearest one found, else the search radius.
    public var boundaryDistanceMeters: Double {
        nearestBoundaryMeters ?? searchRadiusMeters
    }

    /// The best known lower bound of the distance to any boundary, beyond the search radius
    /// too: what decides how long an outage may go unwatched.
    public var outageDistanceMeters: Double {
        nearestBoundaryMeters ?? max(searchRadiusMeters, boundaryBeyondSearchMeters ?? searchRadiusMeters)
    }

    /// The context of `fix` from its probe (`FenceIndex.probe`, made with an unbounded search
    /// radius for regions GNSS fixes): the nearest boundary within the configuration's search
    /// radius; for a regions GNSS fix with none there (outside always-on), the nearest one
    /// anywhere (`.infinity` without fences). No index lookup of its own; the course
    /// clearance is added by the caller (`Monitor`), which samples the index ahead.
    public init(fix: Fix, probe: FenceProbe?, configuration: PowerConfiguration,
                allCertain: Bool, transitionPending: Bool, earliestDwellDeadline: UTCTime?) {
        let radius = configuration.searchRadiusMeters
        // A distance that is not a number says nothing: taken as on the boundary (fail safe).
        let nearest = probe?.nearestDistanceMeters.map { $0.isNaN ? 0 : $0 }
        self.init(nearestBoundaryMeters: nearest.flatMap { $0 <= radius ? $0 : nil }, searchRadiusMeters: radius,
                  allCertain: allCertain, transitionPending: transitionPending, earliestDwellDeadline: earliestDwellDeadline)
        if !configuration.alwaysOn, configuration.mode == .regions, fix.source == .gnss, nearestBoundaryMeters == nil {
            boundaryBeyondSearchMeters = nearest ?? .infinity
        }
    }

    /// Spacing of the boundary-clearance samples along a fix's course (heading bound).
    public static let courseStepMeters: Double = 100
    /// Longest stretch of course sampled.
    public static let courseLengthMeters: Double = 5000
}

/// Distances to the nearest fence boundary at points ahead of a fix along its course.
///
/// `clearanceMeters[k]` is a lower bound of the distance from the point `k × stepMeters` ahead
/// (along the fix's course, from the fix's position) to any fence boundary. Since distance to a
/// set is 1-Lipschitz, any point of the course line within `stepMeters / 2` of sample `k` is at
/// least `clearanceMeters[k] − stepMeters / 2` from every boundary.
public struct CourseClearance: Hashable, Sendable {
    public var stepMeters: Double
    public var clearanceMeters: [Double]

    public init(stepMeters: Double, clearanceMeters: [Double]) {
        self.stepMeters = stepMeters
        self.clearanceMeters = clearanceMeters
    }

    /// Length of the course covered by the samples.
    public var lengthMeters: Double { Double(max(0, clearanceMeters.count - 1)) * stepMeters }

    /// Samples the index along `courseDegrees` from `origin`, up to `lengthMeters`.
    public static func sample(
        index: FenceIndex,
        from origin: Coordinate,
        courseDegrees: Double,
        lengthMeters: Double,
        stepMeters: Double,
        searchRadiusMeters: Double
    ) -> CourseClearance {
        let count = Int((lengthMeters / stepMeters).rounded(.up)) + 1
        var clearance: [Double] = []
        clearance.reserveCapacity(count)
        for k in 0..<count {
            let point = Geodesy.sphericalDestination(from: origin, bearingDegrees: courseDegrees, distanceMeters: Double(k) * stepMeters)
            let d = index.nearestBoundary(to: point, within: searchRadiusMeters).map { abs($0.signedDistanceMeters) } ?? searchRadiusMeters
            clearance.append(d)
        }
        return CourseClearance(stepMeters: stepMeters, clearanceMeters: clearance)
    }
}
