/// Stable event ids: 16 lowercase hex digits of a 64-bit FNV-1a hash over the profile name,
/// the fence id (empty for `location`), the kind and the event time in milliseconds, each
/// field followed by a 0x1F separator byte. Same inputs, same id, on every run and machine.
public enum EventID {
    public static func make(profile: String, fenceID: String?, kind: EventKind, time: UTCTime) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func feed<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            hash ^= 0x1F
            hash = hash &* 0x0000_0100_0000_01b3
        }
        feed(profile.utf8)
        feed((fenceID ?? "").utf8)
        feed(kind.rawValue.utf8)
        feed(String(time.millisecondsSince1970).utf8)
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
