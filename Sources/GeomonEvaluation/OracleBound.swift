public import GeomonCore

/// The lower bound of GNSS on-time an oracle that knew the track could reach.
///
/// Definition: a boundary crossing is a pair of consecutive recorded fixes and a fence such that
/// one fix is inside the fence and the other is not (containment of the recorded positions as the
/// fence index decides it, accuracy ignored). The oracle switches the receiver on once at the start
/// (warm TTFF plus one fix, taken as one second of tracking) and once per crossing (hot TTFF plus
/// one second); nothing else. Energy uses the receiver's acquire and track powers.
public struct OracleBound: Hashable, Sendable {
    public var crossings: Int
    public var gnssOnSeconds: Double
    public var energyMilliwattHours: Double

    public init(track: some Sequence<Fix>, index: FenceIndex, settings: ReceiverSettings) {
        var counter = Counter(index: index)
        for fix in track { counter.add(fix) }
        self.init(counter, settings: settings)
    }

    /// The bound from the crossings counted over a recording.
    public init(_ counter: Counter, settings: ReceiverSettings) {
        crossings = counter.crossings
        guard counter.fixes > 0 else {
            gnssOnSeconds = 0
            energyMilliwattHours = 0
            return
        }
        let acquire = settings.ttffWarm.secondsValue + Double(crossings) * settings.ttffHot.secondsValue
        let tracking = 1.0 + Double(crossings)
        gnssOnSeconds = acquire + tracking
        energyMilliwattHours = (acquire * settings.powerAcquireMilliwatts + tracking * settings.powerTrackMilliwatts) / 3600
    }

    /// Counts the crossings of a recording fed to it fix by fix, in time order: the fences
    /// containing each fix from the index (`FenceIndex.containing`, a point on the boundary is
    /// inside), against the previous fix's.
    public struct Counter {
        private let index: FenceIndex
        private var previous: [Int] = []
        public private(set) var crossings = 0
        public private(set) var fixes = 0

        public init(index: FenceIndex) {
            self.index = index
        }

        public mutating func add(_ fix: Fix) {
            let inside = index.containing(fix.coordinate)
            if fixes > 0 { crossings += Self.changes(previous, inside) }
            previous = inside
            fixes += 1
        }

        /// The size of the symmetric difference of two ascending lists.
        private static func changes(_ a: [Int], _ b: [Int]) -> Int {
            if a == b { return 0 }
            var i = 0, j = 0, count = 0
            while i < a.count, j < b.count {
                if a[i] == b[j] {
                    i += 1
                    j += 1
                } else if a[i] < b[j] {
                    count += 1
                    i += 1
                } else {
                    count += 1
                    j += 1
                }
            }
            return count + (a.count - i) + (b.count - j)
        }
    }
}
