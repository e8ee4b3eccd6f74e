public import GeomonCore

/// Parses gpsd's JSON (`gpspipe -w` output) into fixes, incrementally: `TPV` objects with
/// mode ≥ 2, a time and a valid position. gpsd prints several TPV reports per epoch; consecutive
/// reports with the same time are merged (the last position, the last accuracy given) and one fix
/// is produced per time. Accuracy: `eph`, else max(`epx`, `epy`), else the unknown default.
/// Other classes (SKY, DEVICE, …) are ignored; lines that are not JSON are counted.
public struct GPSDJSONParser: Sendable {
    /// Counts of skipped input by reason.
    public private(set) var skipped: [String: Int] = [:]

    private var buffer = LineBuffer()
    private var pending: Fix?
    private var pendingHasAccuracy = false

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
        if let last = buffer.finish() { last.withUnsafeBufferPointer { parse($0, into: &fixes) } }
        if let p = pending { fixes.append(p) }
        pending = nil
        return fixes
    }

    private mutating func count(_ reason: String) {
        skipped[reason, default: 0] += 1
    }

    private mutating func parse(_ line: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        guard let first = line.first(where: { $0 != 32 && $0 != 9 && $0 != 0 }) else { return }
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
        var accuracy: Double?
        if let eph = object["eph"]?.double, eph.isFinite, eph > 0 {
            accuracy = eph
        } else if let epx = object["epx"]?.double, let epy = object["epy"]?.double, epx.isFinite, epy.isFinite,
                  epx >= 0, epy >= 0 {
            accuracy = max(epx, epy)
        }
        let fix = Fix(
            time: time,
            coordinate: Coordinate(latitude: lat, longitude: lon),
            horizontalAccuracyMeters: accuracy ?? AccuracyModel.unknownAccuracyMeters,
            speedMetersPerSecond: object["speed"]?.double.flatMap { $0.isFinite ? $0 : nil },
            courseDegrees: object["track"]?.double.flatMap { $0.isFinite ? $0 : nil }
        )
        if var p = pending, p.time == time {
            let keepAccuracy = accuracy == nil && pendingHasAccuracy ? p.horizontalAccuracyMeters : nil
            p = fix
            if let keepAccuracy { p.horizontalAccuracyMeters = keepAccuracy }
            pendingHasAccuracy = pendingHasAccuracy || accuracy != nil
            pending = p
            return
        }
        if let p = pending { fixes.append(p) }
        pending = fix
        pendingHasAccuracy = accuracy != nil
    }
}
