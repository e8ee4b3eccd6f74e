/// `approach:` of a fence: distance bands around its boundary, and time bands (ETA), each
/// reported once per approach when the device comes within it while moving towards the fence
/// (docs/engine.md, "Approach").
public struct ApproachSettings: Hashable, Sendable {
    /// Distances from the boundary (metres), largest first, distinct.
    public var bandsMeters: [Double]
    /// Times to arrival (`eta:`), largest first, distinct: reached when the ETA's lower bound
    /// `(s − a − h) / v` is at most the band.
    public var etaBands: [Duration] = []
    /// How far beyond a band the device must certainly be before the band is reported again
    /// (`reset`); nil: each band's own, `max(100 m, band / 5)`.
    public var resetMeters: Double?
    /// The fixes the direction is taken from (`window`).
    public var window: Duration = .seconds(60)
    /// The least closing speed that counts as moving towards or away (`min_speed`).
    public var minSpeedMetersPerSecond: Double = 0.5

    /// The most bands a fence may have.
    public static let maxBands = 16

    public init(bandsMeters: [Double], etaBands: [Duration] = [], resetMeters: Double? = nil) {
        self.bandsMeters = bandsMeters.sorted(by: >)
        self.etaBands = etaBands.sorted(by: >)
        self.resetMeters = resetMeters
    }

    /// All bands: the distance bands' bits first, then the ETA bands'.
    public var bandCount: Int { bandsMeters.count + etaBands.count }

    /// The distance within which an ETA band can be reached at all: no one closes faster than
    /// `maxSpeed`, so farther than `band × maxSpeed` the ETA is above the band. An ETA band is
    /// armed again beyond this distance plus its reset.
    public static func reachableMeters(eta band: Duration, maxSpeed: Double) -> Double {
        band.secondsValue * max(0, maxSpeed)
    }

    /// The reset distance of band `band`.
    public func reset(forBand band: Double) -> Double {
        resetMeters ?? max(100, band / 5)
    }

    /// Band `k` (the distance bands' bits, then the ETA bands') as a distance from the boundary.
    public func distance(ofBand k: Int, maxSpeed: Double) -> Double {
        k < bandsMeters.count ? bandsMeters[k] : Self.reachableMeters(eta: etaBands[k - bandsMeters.count], maxSpeed: maxSpeed)
    }

    /// How far from the boundary the device is tracked at all: the largest band (an ETA band
    /// as the distance `reachableMeters`) and its reset.
    public func reachMeters(maxSpeed: Double) -> Double {
        let distance = bandsMeters.first ?? 0
        let eta = etaBands.first.map { Self.reachableMeters(eta: $0, maxSpeed: maxSpeed) } ?? 0
        let largest = max(distance, eta)
        return largest > 0 ? largest + reset(forBand: largest) : 0
    }
}

/// Which way the device moves relative to a fence's boundary, from a window of fixes.
public enum ApproachDirection: String, Hashable, Sendable, CaseIterable {
    case towards
    case away
    case stationary
}

/// One distance sample of an approach: a usable fix's time and signed distance to the boundary.
public struct ApproachSample: Hashable, Sendable {
    public var time: UTCTime
    public var signedDistanceMeters: Double

    public init(time: UTCTime, signedDistanceMeters: Double) {
        self.time = time
        self.signedDistanceMeters = signedDistanceMeters
    }
}

/// The persisted approach state of one fence near the device: the bands reported in the
/// current approach and the recent distance samples.
public struct ApproachRecord: Hashable, Sendable {
    public var fenceID: String
    /// Bit `k` set: `bandsMeters[k]` was reported in this approach.
    public var fired: UInt32
    /// Samples, oldest first: at most one older than the window, the rest at least
    /// `window / 8` apart.
    public var samples: [ApproachSample]

    public init(fenceID: String, fired: UInt32 = 0, samples: [ApproachSample] = []) {
        self.fenceID = fenceID
        self.fired = fired
        self.samples = samples
    }
}

/// The direction and closing speed of a window of samples (docs/engine.md, "Approach").
///
/// The closing speed `v` is minus the least-squares slope of distance over time across the
/// window; the device moves **towards** when `v ≥ min_speed` and the distance the fit closes
/// across the window, `v × span`, is at least the tolerance (the newest fix's accuracy plus
/// the hysteresis: what a standing receiver's scatter can fake); **away** symmetrically;
/// otherwise **stationary**. Fewer than two samples, or no time between them: stationary.
public struct ApproachEstimate: Hashable, Sendable {
    public var direction: ApproachDirection
    /// Metres per second, positive towards the boundary.
    public var closingSpeedMetersPerSecond: Double

    public init(direction: ApproachDirection, closingSpeedMetersPerSecond: Double) {
        self.direction = direction
        self.closingSpeedMetersPerSecond = closingSpeedMetersPerSecond
    }

    public static func of(_ samples: [ApproachSample], toleranceMeters: Double, minSpeed: Double) -> ApproachEstimate {
        guard samples.count >= 2, let first = samples.first, let last = samples.last, last.time > first.time else {
            return ApproachEstimate(direction: .stationary, closingSpeedMetersPerSecond: 0)
        }
        let n = Double(samples.count)
        var meanT = 0.0, meanS = 0.0
        for sample in samples {
            meanT += (sample.time - first.time).secondsValue
            meanS += sample.signedDistanceMeters
        }
        meanT /= n
        meanS /= n
        var covariance = 0.0, variance = 0.0
        for sample in samples {
            let dt = (sample.time - first.time).secondsValue - meanT
            covariance += dt * (sample.signedDistanceMeters - meanS)
            variance += dt * dt
        }
        let v = variance > 0 ? -covariance / variance : 0
        let closed = v * (last.time - first.time).secondsValue
        let direction: ApproachDirection
        if v >= minSpeed && closed >= toleranceMeters {
            direction = .towards
        } else if -v >= minSpeed && -closed >= toleranceMeters {
            direction = .away
        } else {
            direction = .stationary
        }
        return ApproachEstimate(direction: direction, closingSpeedMetersPerSecond: v)
    }
}

extension EventRule {
    /// An approach band reached while moving towards the fence.
    public struct Approach: Hashable, Sendable {
        /// The distance band reported (the smallest one reached), metres from the boundary;
        /// nil when the fix reached only an ETA band.
        public var bandMeters: Double?
        /// The ETA band reported (the smallest one reached), when the fix reached one.
        public var bandETA: Duration?
        /// Distance from the fix to the boundary, and its certain lower bound `s − a − h`.
        public var distanceMeters: Double
        public var distanceLowerBoundMeters: Double
        public var direction: ApproachDirection
        public var closingSpeedMetersPerSecond: Double
        /// `distance / closing speed` (moving towards, above the speed floor).
        public var eta: Duration?
        /// The earliest arrival `policy.max_speed` allows: the lower bound over the speed.
        public var etaLowerBound: Duration?
        /// The samples the direction came from, and how long they span.
        public var samples: Int
        public var span: Duration

        public init(bandMeters: Double?, bandETA: Duration? = nil, distanceMeters: Double, distanceLowerBoundMeters: Double, direction: ApproachDirection,
                    closingSpeedMetersPerSecond: Double, eta: Duration?, etaLowerBound: Duration?, samples: Int, span: Duration) {
            self.bandMeters = bandMeters
            self.bandETA = bandETA
            self.distanceMeters = distanceMeters
            self.distanceLowerBoundMeters = distanceLowerBoundMeters
            self.direction = direction
            self.closingSpeedMetersPerSecond = closingSpeedMetersPerSecond
            self.eta = eta
            self.etaLowerBound = etaLowerBound
            self.samples = samples
            self.span = span
        }
    }
}

