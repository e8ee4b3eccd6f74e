public import GeomonCore

/// Parses gpsd's JSON (`gpspipe -w` output) into fixes, incrementally: `TPV` objects with
/// mode ≥ 2, a time and a valid position. gpsd prints several TPV reports per epoch; they go
/// through the epoch machine `geomon run` uses (`GPSDEpochs`): an epoch's reports are merged,
/// and it is a fix once a report gives its accuracy and the receiver's velocity (a course, or a
/// speed of zero), else when the next starts. Accuracy as
/// `GPSDEpochs.accuracy` reads it, else the unknown default. Other classes (SKY, DEVICE, …) are
/// ignored; lines that are not JSON are counted.
public struct GPSDJSONParser: Sendable {
    /// Counts of skipped input by reason.
    public private(set) var skipped: [String: Int] = [:]

    private var buffer = LineBuffer()
    private var epochs = GPSDEpochs()

    public init() {}

    /// Parses a chunk; returns the fixes of the epochs it completed.
    public mutating func feed(_ bytes: [UInt8]) -> [Fix] {
        var fixes: [Fix] = []
        bytes.withUnsafeBufferPointer { feed($0, into: &fixes) }
        return fixes
    }

    /// Parses a chunk, appending the fixes of the epochs it completed to `fixes`.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        var buffer = LineBuffer()
        swap(&buffer, &self.buffer)
        defer { swap(&buffer, &self.buffer) }
        buffer.append(bytes, line: { parse($0, into: &fixes) }, overflowed: { skipped["garbage", default: 0] += 1 })
    }

    /// Ends the input: the last epoch completes.
    public mutating func finish() -> [Fix] {
        var fixes: [Fix] = []
        if let last = buffer.finish(overflowed: { skipped["garbage", default: 0] += 1 }) { last.withUnsafeBufferPointer { parse($0, into: &fixes) } }
        fixes += epochs.flush()
        return fixes
    }

    private mutating func count(_ reason: String) {
        skipped[reason, default: 0] += 1
    }

    private mutating func parse(_ line: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        // A UTF-8 byte order mark may open the file (FlatJSON skips it too).
        let bom = FlatJSON.startsWithByteOrderMark(line)
        guard let first = line.dropFirst(bom ? 3 : 0).first(where: { $0 != 32 && $0 != 9 && $0 != 0 }) else { return }
        guard first == 123 else {
            count(first == 36 || first == 33 ? "nmea" : "not json") // .chk files interleave NMEA
            return
        }
        guard let object = try? FlatJSON.parseObject(line) else { count("malformed"); return }
        guard object["class"]?.string == "TPV" else { return }
        guard let mode = object["mode"]?.double, mode >= 2 else { count("no fix"); return }
        guard let timeText = object["time"]?.string else { count("no time"); return }
        guard let time = UTCTime(rfc3339: timeText) else { count("bad time"); return }
        guard let lat = object["lat"]?.double, let lon = object["lon"]?.double,
              Coordinate(latitude: lat, longitude: lon).isValid
        else { count("invalid coordinate"); return }
        let accuracy = GPSDEpochs.accuracy(eph: object["eph"]?.double, epx: object["epx"]?.double, epy: object["epy"]?.double)
        var speed: Double?
        if let value = object["speed"]?.double {
            speed = ReportedMotion.speed(value)
            if speed == nil { count("invalid speed") }
        }
        var course: Double?
        if let value = object["track"]?.double {
            course = ReportedMotion.course(value)
            if course == nil { count("invalid course") }
        }
        let fix = Fix(
            time: time,
            coordinate: Coordinate(latitude: lat, longitude: lon),
            horizontalAccuracyMeters: accuracy ?? AccuracyModel.unknownAccuracyMeters,
            speedMetersPerSecond: speed,
            courseDegrees: course
        )
        fixes += epochs.reported(fix, accuracyKnown: accuracy != nil, device: object["device"]?.string)
    }
}
