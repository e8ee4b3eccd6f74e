#if canImport(Glibc)
import Glibc
#endif

/// How long a device certainly cannot reach any fence boundary, from what one fix says.
///
/// Three bounds, each safe on its own under its stated assumptions; the longest one wins:
///
/// - **max-speed**: the device never moves faster than `maxSpeed` (or, when a fix reports more,
///   than its speed plus the speed error). Reachable distance in `t` is `maxSpeed·t`, so the
///   horizon is `(d − accuracy − margin) / maxSpeed`.
/// - **kinematic** (direction-free): the velocity at the fix is within `speedError` of the reported
///   speed `v`, and afterwards changes by at most `maxAcceleration` per second, never above
///   `maxSpeed`. Then the distance reachable in `t` is at most `(v + speedError)·t + A·t²/2`
///   until the speed reaches `maxSpeed`, and grows at `maxSpeed` after.
/// - **heading**: as kinematic, but also using the reported course (only at speeds of at least
///   `minSpeedForCourse`), whose error is at most `courseErrorDegrees`. With `u₀` the reported
///   velocity, `e = speedError + v·2·sin(courseError/2)` bounds the error of `u₀`. The true velocity
///   is `λ(τ)·(u₀ + w(τ))` with `λ ∈ [0, 1]` (slowing down or stopping is free) and
///   `|w(τ)| ≤ e + A·τ` (turning and speeding up are limited by `A`). Then the position at any
///   `τ ≤ t` is `s·u₀ + δ` from the fix with progress `s = ∫λ ∈ [0, t]` and
///   `|δ| ≤ r(s) = s·(e + A·t − A·s/2)`: a "trumpet" along the course, thin near the fix. The
///   bound holds while the boundary clearance sampled along the course exceeds `r` everywhere.
///
/// In every case the fix's true position is assumed within `accuracy` of the reported one, and
/// boundary distances from the index are lower bounds.
public struct ReachabilityBound: Hashable, Sendable {
    public var maxSpeedMetersPerSecond: Double
    public var maxAccelerationMetersPerSecondSquared: Double
    public var speedErrorMetersPerSecond: Double
    public var courseErrorDegrees: Double
    /// Below this speed the reported course is not used (the heading bound is skipped).
    public var minSpeedForCourseMetersPerSecond: Double

    public init(
        maxSpeedMetersPerSecond: Double,
        maxAccelerationMetersPerSecondSquared: Double,
        speedErrorMetersPerSecond: Double,
        courseErrorDegrees: Double,
        minSpeedForCourseMetersPerSecond: Double = 3
    ) {
        self.minSpeedForCourseMetersPerSecond = minSpeedForCourseMetersPerSecond
        self.maxSpeedMetersPerSecond = maxSpeedMetersPerSecond
        self.maxAccelerationMetersPerSecondSquared = maxAccelerationMetersPerSecondSquared
        self.speedErrorMetersPerSecond = speedErrorMetersPerSecond
        self.courseErrorDegrees = courseErrorDegrees
    }

    public struct Horizon: Hashable, Sendable {
        /// Seconds after the fix during which no boundary can be reached (within the margin).
        public var seconds: Double
        public var bound: PowerReason.SleepBound
    }

    /// The longest provably safe horizon, at most `limitSeconds`.
    ///
    /// - Parameters:
    ///   - distanceMeters: lower bound of the distance from the fix to any boundary.
    ///   - reserveMeters: subtracted from every clearance: the fix accuracy plus the wake margin.
    public func horizon(
        distanceMeters: Double,
        reserveMeters: Double,
        speedMetersPerSecond: Double?,
        courseDegrees: Double?,
        courseClearance: CourseClearance?,
        limitSeconds: Double
    ) -> Horizon {
        let budget = distanceMeters - reserveMeters
        guard budget > 0, maxSpeedMetersPerSecond > 0 else { return Horizon(seconds: 0, bound: .maxSpeed) }
        // A bound below what the fix reports cannot hold for it: the device may go on at its
        // reported speed plus the error (the watch widens the bound for the fixes after).
        let reported = speedMetersPerSecond.map { $0.isFinite && $0 >= 0 ? $0 + speedErrorMetersPerSecond : 0 } ?? 0
        let vmax = max(maxSpeedMetersPerSecond, reported)
        var best = Horizon(seconds: min(limitSeconds, budget / vmax), bound: .maxSpeed)
        guard let v = speedMetersPerSecond, v.isFinite, v >= 0 else { return best }

        let kinematic = Self.kinematicSeconds(budget, speed: v + speedErrorMetersPerSecond,
                                              acceleration: maxAccelerationMetersPerSecondSquared, maxSpeed: vmax)
        if kinematic > best.seconds { best = Horizon(seconds: min(limitSeconds, kinematic), bound: .kinematic) }

        if let course = courseDegrees, course.isFinite, v >= minSpeedForCourseMetersPerSecond,
           let clearance = courseClearance, clearance.clearanceMeters.count >= 2, clearance.stepMeters > 0
        {
            let e = speedErrorMetersPerSecond + v * 2 * sin(courseErrorDegrees * Geodesy.radiansPerDegree / 2)
            // The condition is monotone in t: bisect on whole milliseconds.
            var lo = 0.0, hi = limitSeconds
            if headingClear(t: hi, v: v, e: e, clearance: clearance, reserve: reserveMeters) {
                lo = hi
            } else {
                while hi - lo > 0.01 {
                    let mid = (lo + hi) / 2
                    if headingClear(t: mid, v: v, e: e, clearance: clearance, reserve: reserveMeters) { lo = mid } else { hi = mid }
                }
            }
            if lo > best.seconds { best = Horizon(seconds: lo, bound: .heading) }
        }
        return best
    }

    /// The farthest the device can be from the fix after `seconds`, by the max-speed and
    /// kinematic bounds (each holds, so the smaller): what `horizon` turns back into a time.
    public func reachMeters(seconds t: Double, speedMetersPerSecond: Double?) -> Double {
        guard t > 0 else { return 0 }
        let reported = speedMetersPerSecond.map { $0.isFinite && $0 >= 0 ? $0 + speedErrorMetersPerSecond : 0 } ?? 0
        let vmax = max(maxSpeedMetersPerSecond, reported)
        guard let v = speedMetersPerSecond, v.isFinite, v >= 0 else { return vmax * t }
        let b = min(v + speedErrorMetersPerSecond, vmax), a = maxAccelerationMetersPerSecondSquared
        guard a > 0 else { return min(vmax * t, b * t) }
        let t1 = (vmax - b) / a
        let kinematic = t <= t1 ? b * t + a * t * t / 2 : b * t1 + a * t1 * t1 / 2 + vmax * (t - t1)
        return min(vmax * t, kinematic)
    }

    /// The least acceleration bound under which the kinematic bound from a fix reporting `v`
    /// reaches `meters` within `t` (this bound's `max_speed` and speed error): 0 when the
    /// reported speed plus its error covers it alone, nil when no acceleration does (beyond
    /// `max_speed · t`: the speed bound broke). The inverse of `reachMeters` in its acceleration.
    public func leastAcceleration(covering meters: Double, seconds t: Double, speedMetersPerSecond v: Double) -> Double? {
        guard t > 0, v.isFinite, v >= 0 else { return nil }
        let vmax = max(maxSpeedMetersPerSecond, v + speedErrorMetersPerSecond)
        let b = min(v + speedErrorMetersPerSecond, vmax)
        if meters <= b * t { return 0 }
        guard meters < vmax * t else { return nil }
        // Reaching `vmax` exactly at `t` covers `(b + vmax)·t/2`: below it the speed is still
        // rising at `t` (`b·t + A·t²/2`), above it the cap is reached at `t₁ = (vmax − b)/A`
        // (`vmax·t − (vmax − b)²/(2A)`).
        if meters <= (b + vmax) * t / 2 { return 2 * (meters - b * t) / (t * t) }
        return (vmax - b) * (vmax - b) / (2 * (vmax * t - meters))
    }

    /// The least time to cover `budget` starting at most at `speed` (the reported speed plus
    /// its error), speeding up by at most `acceleration` per second, never above `maxSpeed`:
    /// `b·t + A·t²/2` until the speed reaches `maxSpeed` at `t₁ = (maxSpeed − b)/A`, then
    /// `maxSpeed` on. Both bounds hold at once, so this is at least each of them alone.
    static func kinematicSeconds(_ budget: Double, speed b: Double, acceleration a: Double, maxSpeed: Double) -> Double {
        if b >= maxSpeed { return budget / maxSpeed }
        guard a > 0 else { return b > 0 ? budget / b : .infinity }
        let t1 = (maxSpeed - b) / a
        let d1 = b * t1 + a * t1 * t1 / 2
        if budget <= d1 { return (-b + (b * b + 2 * a * budget).squareRoot()) / a }
        return t1 + (budget - d1) / maxSpeed
    }

    /// Whether every position reachable within `t` (heading model) keeps `reserve` from all
    /// boundaries. Reachable positions lie in the union over progress `s ∈ [0, t]` of disks
    /// centred `s·v` along the course with radius `r(s) = s·(e + A·t − A·s/2)` (the velocity error
    /// `λ·w` integrates to at most `∫λ(τ)(e + Aτ)dτ`, largest when all progress comes last).
    /// Between samples `k` and `k+1` the clearance is at least `(cₖ + cₖ₊₁ − step)/2`, and `r` grows
    /// with `s`, so each piece is checked against the radius at its far end.
    private func headingClear(t: Double, v: Double, e: Double, clearance: CourseClearance, reserve: Double) -> Bool {
        let a = maxAccelerationMetersPerSecondSquared
        let step = clearance.stepMeters
        let c = clearance.clearanceMeters
        let reach = v * t
        var k = 0
        while true {
            guard k + 1 < c.count else { return false }
            let farProgress = min(t, Double(k + 1) * step / v)
            let radius = farProgress * (e + a * t - a * farProgress / 2)
            // Not clear unless certainly clear (a clearance that is not a number is not).
            if !((c[k] + c[k + 1] - step) / 2 - reserve > radius) { return false }
            if Double(k + 1) * step >= reach { return true }
            k += 1
        }
    }
}
