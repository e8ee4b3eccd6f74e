/// What a fence is for consumers: its name and its geometry, as a 64-bit FNV-1a hash of the
/// name's bytes and the shape's numbers (their IEEE 754 bits). Same fence, same value, on every
/// run and machine (never `Hasher`, which is seeded per process). A stay decided against one
/// fingerprint is closed when the fence with its id has another (docs/engine.md, "Closing a
/// stay"); hooks, `dwell`, `active:` and the other settings are not part of it.
public enum FenceFingerprint {
    public static func of(name: String?, shape: FenceShape) -> UInt64 {
        var hash = FNV()
        hash.feed(name ?? "")
        switch shape {
        case let .circle(center, radius):
            hash.feed(UInt64(1))
            hash.feed(center)
            hash.feed(radius)
        case let .polygons(polygons):
            hash.feed(UInt64(2))
            for polygon in polygons {
                hash.feed(UInt64(polygon.holes.count))
                for ring in [polygon.shell] + polygon.holes {
                    hash.feed(UInt64(ring.count))
                    for point in ring { hash.feed(point) }
                }
            }
        case let .corridor(lines, width):
            hash.feed(UInt64(3))
            hash.feed(width)
            for line in lines {
                hash.feed(UInt64(line.count))
                for point in line { hash.feed(point) }
            }
        }
        return hash.value
    }

    private struct FNV {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func feed(_ word: UInt64) {
            var w = word
            for _ in 0..<8 {
                value ^= w & 0xFF
                value = value &* 0x0000_0100_0000_01b3
                w >>= 8
            }
        }

        mutating func feed(_ number: Double) { feed(number.bitPattern) }

        mutating func feed(_ point: Coordinate) {
            feed(point.latitude)
            feed(point.longitude)
        }

        mutating func feed(_ text: String) {
            for byte in text.utf8 {
                value ^= UInt64(byte)
                value = value &* 0x0000_0100_0000_01b3
            }
            feed(UInt64(0x1F))
        }
    }
}
