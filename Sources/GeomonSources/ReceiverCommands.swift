public import GeomonCore

/// The bytes each power method writes to the receiver (through gpsd) to switch it off and on.
public enum ReceiverCommands {
    /// UBX-CFG-RST, controlled GNSS stop (`resetMode` 0x08, no BBR clear): the engine stops,
    /// ephemerides stay, so the next start is hot.
    public static let ubxGNSSStop: [UInt8] = [0xB5, 0x62, 0x06, 0x04, 0x04, 0x00, 0x00, 0x00, 0x08, 0x00, 0x16, 0x74]
    /// UBX-CFG-RST, controlled GNSS start (`resetMode` 0x09).
    public static let ubxGNSSStart: [UInt8] = [0xB5, 0x62, 0x06, 0x04, 0x04, 0x00, 0x00, 0x00, 0x09, 0x00, 0x17, 0x76]
    /// `$PMTK161,0*28`: MediaTek/Quectel standby (any byte on the UART wakes it).
    public static let mtkStandby: [UInt8] = Array("$PMTK161,0*28\r\n".utf8)
    /// `$PMTK000*32`: MediaTek's test packet, harmless, the byte that wakes it from standby.
    public static let mtkWake: [UInt8] = Array("$PMTK000*32\r\n".utf8)

    /// What to write to switch the receiver off; nil for methods that write nothing to it.
    public static func off(_ method: GNSSPowerMethod) -> [UInt8]? {
        switch method {
        case .ubx: ubxGNSSStop
        case .mtk: mtkStandby
        case .watch, .command, .modemmanager: nil
        }
    }

    /// What to write to switch it on again.
    public static func on(_ method: GNSSPowerMethod) -> [UInt8]? {
        switch method {
        case .ubx: ubxGNSSStart
        case .mtk: mtkWake
        case .watch, .command, .modemmanager: nil
        }
    }
}
