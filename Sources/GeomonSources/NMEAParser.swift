public import GeomonCore

/// An incremental NMEA 0183 parser: feed it bytes in chunks of any size, get one `Fix` per epoch.
///
/// - Sentences: GGA, RMC, GNS, GLL (position), GSA (HDOP), GST (accuracy), ZDA (date), any talker.
///   Other sentences are ignored. The checksum is verified; lines without one are skipped.
/// - Lines end at LF, CR or NUL; garbage, binary noise and partial lines are skipped and counted
///   in `skipped` by reason.
/// - An epoch is the group of sentences carrying the same time of day; it becomes a fix when its
///   last position sentence reporting fix or no fix reports a fix (GGA quality 1–6, RMC/GLL
///   status A and mode not N, GNS mode not all N) with a valid coordinate, which gives the
///   position (as gpsd does). A later RMC V or GGA quality 0 of the epoch cancels its fix.
/// - Speed and course (RMC) pass `ReportedMotion`'s checks or are dropped and counted.
/// - The date comes from RMC (or ZDA). Epochs without a date of their own take the last known
///   date, moving to the next day when the time of day falls back by more than 12 h. Epochs seen
///   before any date is known are held and backfilled from the first date; if the input ends
///   without any date they are skipped as "no date".
/// - Accuracy: GST (2DRMS) if present, else HDOP (GGA/GNS of the epoch, else the last GSA) via
///   `AccuracyModel`, else `AccuracyModel.unknownAccuracyMeters`.
public struct NMEAParser: Sendable {
    /// Counts of skipped input by reason.
    public private(set) var skipped: [String: Int] = [:]

    private var carry: [UInt8] = []
    private var epoch: Epoch?
    private var undated: [Epoch] = []
    private var currentDay: Int64?
    private var lastTimeOfDayMs: Int64 = 0
    private var lastGSAHDOP: Double?
    /// The timed sentence type (its three letters) that ended the previous epoch, as gpsd
    /// learns its "cycle end": a GSA after it belongs to the next epoch (SiRF sends GSA, RMC).
    private var cycleEnder: UInt32?
    /// The last timed sentence type of the open epoch.
    private var lastTimedType: UInt32?
    /// The open epoch has seen its cycle-ending sentence.
    private var epochEnded = false
    private var fields: [Int] = []

    /// About this many epochs wait for a date (a day at 1 Hz; an eighth more before the oldest
    /// go); older ones are dropped as "no date", so a dateless live stream cannot grow memory
    /// without bound.
    static let maxUndatedEpochs = 86_400

    /// Lines longer than this are binary noise, not NMEA (the standard says 82 bytes).
    static let maxLineLength = 512

    public init() {
        fields.reserveCapacity(48)
        carry.reserveCapacity(Self.maxLineLength)
    }

    /// Parses a chunk; returns the fixes of the epochs it completed.
    public mutating func feed(_ bytes: [UInt8]) -> [Fix] {
        var fixes: [Fix] = []
        bytes.withUnsafeBufferPointer { feed($0, into: &fixes) }
        return fixes
    }

    /// Parses a chunk, appending the fixes of completed epochs to `fixes`.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        var lineStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            let c = bytes[i]
            if c == 10 || c == 13 || c == 0 {
                if carry.isEmpty {
                    if i > lineStart {
                        line(UnsafeBufferPointer(rebasing: bytes[lineStart..<i]), into: &fixes)
                    }
                } else {
                    carry.append(contentsOf: bytes[lineStart..<i])
                    flushCarry(into: &fixes)
                }
                lineStart = i + 1
            }
            i += 1
        }
        if lineStart < n {
            carry.append(contentsOf: bytes[lineStart..<n])
            if carry.count > Self.maxLineLength {
                // Noise before the last sentence start goes, as `line` skips it: what follows
                // is kept while it fits, whatever the chunks (a burst of binary at a restart).
                if let last = carry.lastIndex(where: { $0 == 36 || $0 == 33 }), carry.count - last <= Self.maxLineLength {
                    carry.removeSubrange(0..<last)
                } else {
                    count("garbage")
                    carry.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    /// Completes the open epoch now instead of waiting for the next one to start. A live reader
    /// calls this when the line has been quiet for a moment (receivers send an epoch as a burst),
    /// trading a fix split in two for one epoch less latency. Input may continue afterwards.
    public mutating func endEpoch() -> [Fix] {
        var fixes: [Fix] = []
        closeEpoch(into: &fixes)
        return fixes
    }

    /// Ends the input: a trailing partial line is parsed, the open epoch completes, and undated
    /// epochs still waiting for a date are counted as "no date".
    public mutating func finish() -> [Fix] {
        var fixes: [Fix] = []
        flushCarry(into: &fixes)
        closeEpoch(into: &fixes)
        if !undated.isEmpty {
            skipped["no date", default: 0] += undated.count
            undated.removeAll()
        }
        return fixes
    }

    private mutating func flushCarry(into fixes: inout [Fix]) {
        guard !carry.isEmpty else { return }
        let bytes = carry
        carry.removeAll(keepingCapacity: true)
        bytes.withUnsafeBufferPointer { line($0, into: &fixes) }
    }

    private mutating func count(_ reason: String) {
        skipped[reason, default: 0] += 1
    }

    // MARK: - Lines

    private mutating func line(_ raw: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        var start = 0
        var end = raw.count
        while start < end, raw[start] == 32 || raw[start] == 9 { start += 1 }
        while end > start, raw[end - 1] == 32 || raw[end - 1] == 9 { end -= 1 }
        guard start < end else { return }
        if raw[start] == 35 { // '#': comment in gpsd's logs
            count("comment")
            return
        }
        // Sentences start at '$' or '!'; anything before the first is noise from a restart. A
        // line may hold more than one: a sentence cut off by a receiver restart, then a whole
        // one (`$GPRMC,1200$GPRMC,120001.00,…*5D`). Like gpsd, which starts a new sentence at
        // every '$', each start opens a sentence that ends at the next start or the line end.
        var dollar = start
        while dollar < end, raw[dollar] != 36, raw[dollar] != 33 { dollar += 1 }
        guard dollar < end else { count("garbage"); return }
        // The limit is on what follows the noise: a sentence after a long burst of it is read,
        // as it is where the burst came in an earlier chunk of the stream.
        guard end - dollar <= Self.maxLineLength else { count("garbage"); return }
        while dollar < end {
            var next = dollar + 1
            while next < end, raw[next] != 36, raw[next] != 33 { next += 1 }
            var last = next
            while last > dollar, raw[last - 1] == 32 || raw[last - 1] == 9 { last -= 1 }
            checked(UnsafeBufferPointer(rebasing: raw[dollar..<last]), into: &fixes)
            dollar = next
        }
    }

    /// One sentence from its '$' or '!' to its end: parsed when its `*hh` checksum is right.
    private mutating func checked(_ raw: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        let end = raw.count
        // Checksum: "*hh" at the very end.
        guard end >= 4, raw[end - 3] == 42 else {
            // A '*' elsewhere or none at all: a cut-off line or a sentence without checksum.
            count("truncated")
            return
        }
        guard let hi = hexValue(raw[end - 2]), let lo = hexValue(raw[end - 1]) else {
            count("bad checksum")
            return
        }
        var sum: UInt8 = 0
        var k = 1
        while k < end - 3 {
            let c = raw[k]
            guard c >= 32, c < 127 else { count("garbage"); return }
            sum ^= c
            k += 1
        }
        guard sum == hi << 4 | lo else { count("bad checksum"); return }
        let body = UnsafeBufferPointer(rebasing: raw[1..<(end - 3)])
        sentence(body, into: &fixes)
    }

    private mutating func sentence(_ s: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        // Field boundaries: fields[j] is the start of field j, fields[j+1]-1 its end.
        fields.removeAll(keepingCapacity: true)
        fields.append(0)
        for i in 0..<s.count where s[i] == 44 { fields.append(i + 1) }
        fields.append(s.count + 1)
        let address = field(s, 0)
        // Talker (2 letters) + type (3); proprietary sentences start with 'P'.
        guard address.count == 5, s[0] != 80 else { return }
        let t0 = s[2], t1 = s[3], t2 = s[4]
        let type = UInt32(t0) << 16 | UInt32(t1) << 8 | UInt32(t2)
        switch (t0, t1, t2) {
        case (71, 71, 65): gga(s, into: &fixes)          // GGA
        case (82, 77, 67): rmc(s, into: &fixes)          // RMC
        case (71, 78, 83): gns(s, into: &fixes)          // GNS
        case (71, 83, 65): gsa(s); return                // GSA
        case (71, 83, 84): gst(s, into: &fixes)          // GST
        case (90, 68, 65): zda(s, into: &fixes)          // ZDA
        case (71, 76, 76): gll(s, into: &fixes)          // GLL
        default: return
        }
        if epoch != nil { timed(type) }
    }

    private var fieldCount: Int { fields.count - 1 }

    private func field(_ s: UnsafeBufferPointer<UInt8>, _ j: Int) -> Range<Int> {
        guard j + 1 < fields.count else { return s.count..<s.count }
        return fields[j]..<(fields[j + 1] - 1)
    }

    private func char(_ s: UnsafeBufferPointer<UInt8>, _ j: Int) -> UInt8? {
        let r = field(s, j)
        return r.isEmpty ? nil : s[r.lowerBound]
    }

    // MARK: - Sentences

    private mutating func gga(_ s: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        guard let tod = timeOfDay(s, field(s, 1)) else { countTimeless(s, quality: char(s, 6)); return }
        begin(tod, into: &fixes)
        let quality = char(s, 6).map { Int($0) - 48 } ?? 0
        guard (1...6).contains(quality) else { epoch?.cancelFix(); return }
        guard let coordinate = position(s, 2) else { return }
        epoch?.set(coordinate)
        epoch?.ggaQuality = quality
        if let hdop = number(s, field(s, 8)) { epoch?.hdop = hdop }
    }

    private mutating func rmc(_ s: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        guard let tod = timeOfDay(s, field(s, 1)) else { countTimeless(s, quality: char(s, 2) == 65 ? 49 : 48); return }
        begin(tod, into: &fixes)
        if let day = date(s, field(s, 9)) { epoch?.day = day }
        let mode = char(s, 12)
        guard char(s, 2) == 65, mode != 78 else { epoch?.cancelFix(); return }
        guard let coordinate = position(s, 3) else { return }
        epoch?.set(coordinate)
        if mode == 68 { epoch?.differentialMode = true } // D
        if let knots = number(s, field(s, 7)) {
            epoch?.speedMetersPerSecond = ReportedMotion.speed(knots * 0.514_444_444)
            if epoch?.speedMetersPerSecond == nil { count("invalid speed") }
        }
        if let course = number(s, field(s, 8)) {
            epoch?.courseDegrees = ReportedMotion.course(course)
            if epoch?.courseDegrees == nil { count("invalid course") }
        }
    }

    private mutating func gns(_ s: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        guard let tod = timeOfDay(s, field(s, 1)) else { countTimeless(s, quality: nil); return }
        begin(tod, into: &fixes)
        let modes = field(s, 6)
        var hasFix = false
        for i in modes where s[i] != 78 { hasFix = true } // any constellation not 'N'
        guard hasFix else { epoch?.cancelFix(); return }
        guard let coordinate = position(s, 2) else { return }
        epoch?.set(coordinate)
        for i in modes where s[i] == 68 { epoch?.differentialMode = true }
        if let hdop = number(s, field(s, 8)) { epoch?.hdop = hdop }
    }

    private mutating func gll(_ s: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        // $xxGLL,lat,N,lon,E,hhmmss.ss,A[,mode]
        guard let tod = timeOfDay(s, field(s, 5)) else { return }
        begin(tod, into: &fixes)
        guard char(s, 6) == 65, char(s, 7) != 78 else { epoch?.cancelFix(); return }
        guard let coordinate = position(s, 1) else { return }
        epoch?.set(coordinate)
    }

    private mutating func gsa(_ s: UnsafeBufferPointer<UInt8>) {
        // $xxGSA,mode,fix,sv×12,PDOP,HDOP,VDOP[,system]: HDOP is field 16.
        guard fieldCount > 16, let fixType = char(s, 2), fixType >= 50, let hdop = number(s, field(s, 16)) else { return }
        lastGSAHDOP = hdop
        // After the epoch's cycle-ending sentence a GSA describes the next epoch (gpsd reports
        // the DOP in effect at the cycle end).
        if !epochEnded { epoch?.gsaHDOP = hdop }
    }

    /// A sentence with a time was handled in the open epoch.
    private mutating func timed(_ type: UInt32) {
        lastTimedType = type
        if type == cycleEnder { epochEnded = true }
    }

    private mutating func gst(_ s: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        guard let tod = timeOfDay(s, field(s, 1)) else { return }
        begin(tod, into: &fixes)
        // Receivers that do not estimate their error send zero (or empty) sigmas: no accuracy.
        if let lat = number(s, field(s, 6)), let lon = number(s, field(s, 7)), lat.isFinite, lon.isFinite, lat > 0, lon > 0 {
            epoch?.gstAccuracy = AccuracyModel.fromGST(latitudeSigmaMeters: lat, longitudeSigmaMeters: lon)
        }
    }

    private mutating func zda(_ s: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        guard let tod = timeOfDay(s, field(s, 1)) else { return }
        guard let d = integer(s, field(s, 2)), let m = integer(s, field(s, 3)), let y = integer(s, field(s, 4)),
              (1...12).contains(m), (1980...2200).contains(y), d >= 1, d <= UTCTime.daysInMonth(year: y, month: m) else { return }
        begin(tod, into: &fixes)
        epoch?.day = UTCTime.daysFromCivil(year: y, month: m, day: d)
    }

    /// A position sentence without a time: a receiver with nothing to say yet.
    private mutating func countTimeless(_ s: UnsafeBufferPointer<UInt8>, quality: UInt8?) {
        if let quality, quality > 48 { count("no time") } else { count("no fix") }
    }

    // MARK: - Epochs

    private mutating func begin(_ tod: Int64, into fixes: inout [Fix]) {
        if let open = epoch, open.timeOfDayMs == tod { return }
        if epoch != nil, let last = lastTimedType { cycleEnder = last }
        closeEpoch(into: &fixes)
        epoch = Epoch(timeOfDayMs: tod, gsaHDOP: lastGSAHDOP)
        lastTimedType = nil
        epochEnded = false
    }

    private mutating func closeEpoch(into fixes: inout [Fix]) {
        guard let e = epoch else { return }
        epoch = nil
        if let day = e.day {
            if !undated.isEmpty { backfill(until: e, day: day, into: &fixes) }
            currentDay = day
            lastTimeOfDayMs = e.timeOfDayMs
        } else if currentDay == nil {
            if e.coordinate != nil { undated.append(e) } else { count("no fix") }
            // Dropped an eighth at a time: removing one at a time from the front of a day's
            // worth is quadratic in a long dateless log.
            if undated.count > Self.maxUndatedEpochs + Self.maxUndatedEpochs / 8 {
                let excess = undated.count - Self.maxUndatedEpochs
                undated.removeFirst(excess)
                skipped["no date", default: 0] += excess
            }
            return
        }
        guard var day = currentDay else { return }
        if e.day == nil {
            if e.timeOfDayMs + 43_200_000 < lastTimeOfDayMs { day += 1 } // midnight passed
            currentDay = day
            lastTimeOfDayMs = e.timeOfDayMs
        }
        emit(e, day: day, into: &fixes)
    }

    /// Dates epochs seen before the first date: walking back from the dated epoch, each fall
    /// forward of the time of day means the previous day.
    private mutating func backfill(until dated: Epoch, day: Int64, into fixes: inout [Fix]) {
        var days = [Int64](repeating: day, count: undated.count)
        var d = day
        var next = dated.timeOfDayMs
        for k in stride(from: undated.count - 1, through: 0, by: -1) {
            if undated[k].timeOfDayMs > next + 43_200_000 { d -= 1 }
            days[k] = d
            next = undated[k].timeOfDayMs
        }
        let held = undated
        undated.removeAll()
        for (k, e) in held.enumerated() { emit(e, day: days[k], into: &fixes) }
    }

    private mutating func emit(_ e: Epoch, day: Int64, into fixes: inout [Fix]) {
        guard let coordinate = e.coordinate else { count("no fix"); return }
        let accuracy: Double
        if let gst = e.gstAccuracy, gst > 0 {
            accuracy = gst
        } else if let hdop = e.hdop ?? e.gsaHDOP, hdop > 0, hdop < 99 {
            accuracy = AccuracyModel.fromHDOP(hdop, differential: e.differential)
        } else {
            accuracy = AccuracyModel.unknownAccuracyMeters
        }
        fixes.append(Fix(
            time: UTCTime(millisecondsSince1970: day * 86_400_000 + e.timeOfDayMs),
            coordinate: coordinate,
            horizontalAccuracyMeters: accuracy,
            speedMetersPerSecond: e.speedMetersPerSecond,
            courseDegrees: e.courseDegrees
        ))
    }

    // MARK: - Fields

    /// Latitude and longitude from fields j…j+3 (`ddmm.mmmm,N,dddmm.mmmm,E`); nil when empty or
    /// out of range (counted as "invalid coordinate").
    private mutating func position(_ s: UnsafeBufferPointer<UInt8>, _ j: Int) -> Coordinate? {
        guard let latRaw = number(s, field(s, j)), let lonRaw = number(s, field(s, j + 2)),
              let ns = char(s, j + 1), let ew = char(s, j + 3)
        else { return nil }
        let latDeg = (latRaw / 100).rounded(.towardZero)
        let lonDeg = (lonRaw / 100).rounded(.towardZero)
        var lat = latDeg + (latRaw - latDeg * 100) / 60
        var lon = lonDeg + (lonRaw - lonDeg * 100) / 60
        if ns == 83 { lat = -lat } else if ns != 78 { count("invalid coordinate"); return nil }
        if ew == 87 { lon = -lon } else if ew != 69 { count("invalid coordinate"); return nil }
        let c = Coordinate(latitude: lat, longitude: lon)
        guard c.isValid, latRaw >= 0, lonRaw >= 0, latRaw - latDeg * 100 < 60, lonRaw - lonDeg * 100 < 60 else {
            count("invalid coordinate")
            return nil
        }
        return c
    }

    /// `hhmmss[.sss]` as milliseconds of the day.
    private func timeOfDay(_ s: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Int64? {
        guard r.count >= 6 else { return nil }
        func two(_ k: Int) -> Int64? {
            let a = s[r.lowerBound + 2 * k], b = s[r.lowerBound + 2 * k + 1]
            guard a >= 48, a <= 57, b >= 48, b <= 57 else { return nil }
            return Int64(a - 48) * 10 + Int64(b - 48)
        }
        guard let hh = two(0), let mm = two(1), let ss = two(2), hh < 24, mm < 60, ss <= 60 else { return nil }
        var ms: Int64 = 0
        if r.count > 6 {
            guard s[r.lowerBound + 6] == 46 else { return nil }
            var scale: Int64 = 100
            for i in (r.lowerBound + 7)..<r.upperBound {
                let c = s[i]
                guard c >= 48, c <= 57 else { return nil }
                ms += Int64(c - 48) * scale
                scale /= 10
            }
        }
        // A leap second (`235960`) is the last millisecond of its minute: counted as the next
        // minute's first, it would take the instant of the epoch after it.
        if ss == 60 { return ((hh * 60 + mm) * 60 + 59) * 1000 + 999 }
        return ((hh * 60 + mm) * 60 + ss) * 1000 + ms
    }

    /// RMC `ddmmyy` as days since 1970 (years 80–99 are 1980–1999).
    private func date(_ s: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Int64? {
        guard r.count == 6, let v = integer(s, r) else { return nil }
        let d = v / 10000, m = (v / 100) % 100, yy = v % 100
        let year = yy < 80 ? 2000 + yy : 1900 + yy
        guard (1...12).contains(m), d >= 1, d <= UTCTime.daysInMonth(year: year, month: m) else { return nil }
        return UTCTime.daysFromCivil(year: year, month: m, day: d)
    }

    private func integer(_ s: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Int64? {
        guard !r.isEmpty, r.count <= 12 else { return nil }
        var v: Int64 = 0
        for i in r {
            let c = s[i]
            guard c >= 48, c <= 57 else { return nil }
            v = v * 10 + Int64(c - 48)
        }
        return v
    }

    /// A plain decimal (`-12.345`); nil when empty or malformed.
    private func number(_ s: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Double? {
        guard !r.isEmpty else { return nil }
        var i = r.lowerBound
        var negative = false
        if s[i] == 45 || s[i] == 43 { negative = s[i] == 45; i += 1 }
        var mantissa: Int64 = 0
        var digits = 0
        var fraction = 0
        var seenDot = false
        while i < r.upperBound {
            let c = s[i]
            if c == 46, !seenDot {
                seenDot = true
            } else if c >= 48, c <= 57 {
                guard digits < 18 else { return nil }
                mantissa = mantissa * 10 + Int64(c - 48)
                digits += 1
                if seenDot { fraction += 1 }
            } else {
                return nil
            }
            i += 1
        }
        guard digits > 0 else { return nil }
        let value = Double(mantissa) / powersOfTen[fraction]
        return negative ? -value : value
    }
}

private let powersOfTen: [Double] = (0...18).map { p in (0..<p).reduce(1.0) { a, _ in a * 10 } }

private func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case 48...57: c - 48
    case 65...70: c - 55
    case 97...102: c - 87
    default: nil
    }
}

/// The sentences of one time of day, merged.
private struct Epoch: Sendable {
    var timeOfDayMs: Int64
    var day: Int64?
    var coordinate: Coordinate?
    /// GGA's fix quality, when the epoch has a GGA with a fix.
    var ggaQuality: Int?
    /// RMC or GNS said "differential" (mode D).
    var differentialMode = false
    var hdop: Double?
    var gsaHDOP: Double?
    var gstAccuracy: Double?
    var speedMetersPerSecond: Double?
    var courseDegrees: Double?

    init(timeOfDayMs: Int64, gsaHDOP: Double?) {
        self.timeOfDayMs = timeOfDayMs
        self.gsaHDOP = gsaHDOP
    }

    /// The last position sentence of the epoch gives the position, as in gpsd (a GLL after
    /// the GGA may carry one more decimal of the same fix).
    mutating func set(_ c: Coordinate) {
        coordinate = c
    }

    /// A position sentence of the epoch reports no fix (GGA quality 0, RMC/GLL status V or
    /// mode N, GNS modes all N): the last position sentence decides, so what the earlier ones
    /// said is void until a later one reports a fix again (a receiver losing its fix sends GGA
    /// with its last position, then RMC V).
    mutating func cancelFix() {
        coordinate = nil
        ggaQuality = nil
        differentialMode = false
        speedMetersPerSecond = nil
        courseDegrees = nil
    }

    /// Differential corrections as gpsd 3.22 counts them: GGA quality 2 (RTK, 4/5, gets the
    /// autonomous UERE in gpsd 3.22), or without GGA the RMC/GNS mode D.
    var differential: Bool {
        if let q = ggaQuality { return q == 2 }
        return differentialMode
    }
}
