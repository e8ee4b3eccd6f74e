/// The GNSS receiver switched on or off at a time, for a reason (the policy's words).
public struct ReceiverSwitch: Hashable, Sendable {
    public var time: UTCTime
    public var on: Bool
    public var reason: String

    public init(time: UTCTime, on: Bool, reason: String) {
        self.time = time
        self.on = on
        self.reason = reason
    }
}
