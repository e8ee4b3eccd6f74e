import GeomonCore
import GeomonSources
import Testing

/// The bytes the power methods write: well-formed frames a receiver accepts.
struct ReceiverCommandsTests {
    /// UBX's 8-bit Fletcher checksum over class, id, length and payload.
    static func ubxChecksumHolds(_ frame: [UInt8]) -> Bool {
        guard frame.count >= 8, frame[0] == 0xB5, frame[1] == 0x62 else { return false }
        let length = Int(frame[4]) | Int(frame[5]) << 8
        guard frame.count == 8 + length else { return false }
        var a: UInt8 = 0, b: UInt8 = 0
        for byte in frame[2..<(6 + length)] { a &+= byte; b &+= a }
        return frame[6 + length] == a && frame[7 + length] == b
    }

    /// NMEA's checksum: XOR of the characters between `$` and `*`.
    static func nmeaChecksumHolds(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix("$"), text.hasSuffix("\r\n"), let star = text.firstIndex(of: "*") else { return false }
        let body = text[text.index(after: text.startIndex)..<star]
        let sum = body.utf8.reduce(UInt8(0), ^)
        let given = UInt8(text[text.index(after: star)...].prefix(2), radix: 16)
        return given == sum
    }

    @Test func ubxStopAndStartAreCfgRstWithTheirResetModes() {
        for (frame, mode) in [(ReceiverCommands.ubxGNSSStop, UInt8(0x08)), (ReceiverCommands.ubxGNSSStart, UInt8(0x09))] {
            #expect(Self.ubxChecksumHolds(frame))
            #expect(frame[2] == 0x06 && frame[3] == 0x04, "class CFG, id RST")
            // navBbrMask 0 (keep ephemerides: a hot start), resetMode as given.
            #expect(frame[6] == 0 && frame[7] == 0 && frame[8] == mode)
        }
        #expect(ReceiverCommands.off(.ubx) == ReceiverCommands.ubxGNSSStop)
        #expect(ReceiverCommands.on(.ubx) == ReceiverCommands.ubxGNSSStart)
    }

    @Test func mtkSentencesCarryTheirChecksums() {
        #expect(Self.nmeaChecksumHolds(ReceiverCommands.mtkStandby))
        #expect(Self.nmeaChecksumHolds(ReceiverCommands.mtkWake))
        #expect(String(decoding: ReceiverCommands.mtkStandby, as: UTF8.self).hasPrefix("$PMTK161,0*"))
    }

    @Test func watchAndCommandWriteNothingToTheReceiver() {
        for method in [GNSSPowerMethod.watch, .command(on: ["/bin/true"], off: ["/bin/true"])] {
            #expect(ReceiverCommands.off(method) == nil && ReceiverCommands.on(method) == nil)
        }
    }
}
