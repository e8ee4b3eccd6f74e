public import GeomonCore

/// The lower bound of GNSS on-time an oracle that knew the track could reach.
///
/// Definition: a boundary crossing is a pair of consecutive recorded fixes and a fence such
/// that one fix is inside the fence and the other is not (containment of the recorded
/// positions, accuracy ignored). The oracle switches the receiver on once at the start (warm
/// TTFF plus one fix, taken as one second of tracking) and once per crossing (hot TTFF plus one
/// second); nothing else. Energy uses the receiver's acquire and track powers.
public struct OracleBound: Hashable, Sendable {
    public var crossings: Int
    public var gnssOnSeconds: Double
    public var energyMilliwattHours: Double

    public init(track: some Sequence<Fix>, index: FenceIndex, settings: ReceiverSettings) {
        var count = 0
        var previous: [Bool]?
        var any = false
        for fix in track {
            any = true
            let inside = (0..<index.count).map { index.signedDistance(fence: $0, to: fix.coordinate) <= 0 }
            if let previous {
                count += zip(previous, inside).filter { $0 != $1 }.count
            }
            previous = inside
        }
        crossings = count
        guard any else {
            gnssOnSeconds = 0
            energyMilliwattHours = 0
            return
        }
        let acquire = settings.ttffWarm.secondsValue + Double(count) * settings.ttffHot.secondsValue
        let tracking = 1.0 + Double(count)
        gnssOnSeconds = acquire + tracking
        energyMilliwattHours = (acquire * settings.powerAcquireMilliwatts + tracking * settings.powerTrackMilliwatts) / 3600
    }

}
