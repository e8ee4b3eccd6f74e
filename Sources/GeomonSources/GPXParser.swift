public import GeomonCore

/// Reads GPX 1.0 and 1.1 track points with a small byte-level XML scanner (Foundation's
/// XMLParser is unreliable on Linux). Every `trkpt` of every `trk`/`trkseg` with a `time`
/// becomes a fix; `hdop` gives the accuracy (`fix` = `dgps` makes it differential), otherwise
/// `AccuracyModel.unknownAccuracyMeters`. Anything inside `<extensions>` is ignored. Points
/// without time, with a bad coordinate or with `<fix>none</fix>` are skipped and counted.
public enum GPXParser {
    /// Parses a whole document.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> (fixes: [Fix], skipped: [String: Int]) {
        var scanner = Scanner(b: bytes)
        scanner.run()
        return (scanner.fixes, scanner.skipped)
    }

    public static func parse(_ bytes: [UInt8]) -> (fixes: [Fix], skipped: [String: Int]) {
        bytes.withUnsafeBufferPointer { parse($0) }
    }

    private struct Point {
        var lat: Double?
        var lon: Double?
        var time: String?
        var hdop: Double?
        var differential = false
        /// `<fix>none</fix>`: the receiver had no fix; the point is not one.
        var noFix = false
        var speed: Double?
        var course: Double?
    }

    private struct Scanner {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0
        var fixes: [Fix] = []
        var skipped: [String: Int] = [:]
        var point: Point?
        var extensionsDepth = 0
        var textStart: Int?
        var textElement: String?

        init(b: UnsafeBufferPointer<UInt8>) { self.b = b }

        mutating func count(_ reason: String) { skipped[reason, default: 0] += 1 }

        mutating func run() {
            while i < b.count {
                guard b[i] == 60 else { i += 1; continue } // '<'
                if starts("<!--") { skip(past: "-->"); continue }
                if starts("<![CDATA[") { skip(past: "]]>"); continue }
                if starts("<?") { skip(past: "?>"); continue }
                if starts("<!") { skip(past: ">"); continue }
                let tagStart = i
                guard let tagEnd = find(62, from: i) else { count("truncated"); return } // '>'
                i = tagEnd + 1
                var nameStart = tagStart + 1
                let closing = b[nameStart] == 47
                if closing { nameStart += 1 }
                var nameEnd = nameStart
                while nameEnd < tagEnd, !isSpace(b[nameEnd]), b[nameEnd] != 47, b[nameEnd] != 62 { nameEnd += 1 }
                let name = localName(nameStart, nameEnd)
                let selfClosing = !closing && tagEnd > tagStart && b[tagEnd - 1] == 47
                if closing {
                    end(name, tagStart: tagStart)
                } else {
                    start(name, attributes: nameEnd..<(selfClosing ? tagEnd - 1 : tagEnd))
                    if selfClosing { end(name, tagStart: tagStart) }
                }
            }
            if point != nil { count("truncated") }
        }

        mutating func start(_ name: String, attributes: Range<Int>) {
            if extensionsDepth > 0 {
                if name == "extensions" { extensionsDepth += 1 }
                return
            }
            switch name {
            case "extensions":
                extensionsDepth = 1
            case "trkpt":
                var p = Point()
                p.lat = attribute("lat", in: attributes).flatMap(parseDouble)
                p.lon = attribute("lon", in: attributes).flatMap(parseDouble)
                point = p
            case "time", "hdop", "fix", "speed", "course":
                if point != nil {
                    textStart = i
                    textElement = name
                }
            default:
                break
            }
        }

        mutating func end(_ name: String, tagStart: Int) {
            if extensionsDepth > 0 {
                if name == "extensions" { extensionsDepth -= 1 }
                return
            }
            if name == textElement, let s = textStart, point != nil {
                // A self-closing `<time/>` ends before its text would start: empty text.
                let text = trimmed(s, max(s, tagStart))
                switch name {
                case "time": point?.time = text
                case "hdop": point?.hdop = parseDouble(text)
                case "fix":
                    point?.differential = text == "dgps"
                    point?.noFix = text == "none"
                // Not finite ("inf", "1e999") is kept here and refused by `ReportedMotion`.
                case "speed": point?.speed = Double(text)
                case "course": point?.course = Double(text)
                default: break
                }
                textStart = nil
                textElement = nil
            }
            if name == "trkpt", let p = point {
                point = nil
                finish(p)
            }
        }

        /// `YYYY-MM-DDTHH:MM:SS[.fff]` without a zone, as UTC.
        static func utcWithoutZone(_ text: String) -> UTCTime? {
            // Any number of fraction digits (.NET's round-trip format writes seven).
            guard text.count >= 19, text.count <= 40, !text.hasSuffix("Z"), !text.dropFirst(19).contains(where: { $0 == "+" || $0 == "-" }) else { return nil }
            return UTCTime(rfc3339: text + "Z")
        }

        mutating func finish(_ p: Point) {
            guard let lat = p.lat, let lon = p.lon, Coordinate(latitude: lat, longitude: lon).isValid else {
                count("invalid coordinate")
                return
            }
            guard !p.noFix else { count("no fix"); return }
            guard let timeText = p.time else { count("no time"); return }
            // GPX times are UTC (the GPX 1.1 schema); some writers leave the zone out.
            guard let time = UTCTime(rfc3339: timeText) ?? Self.utcWithoutZone(timeText) else { count("bad time"); return }
            var accuracy = AccuracyModel.unknownAccuracyMeters
            // 99.9 (and above) is a receiver's "unknown", as in NMEA.
            if let hdop = p.hdop, hdop.isFinite, hdop > 0, hdop < 99 {
                accuracy = AccuracyModel.fromHDOP(hdop, differential: p.differential)
            }
            var speed: Double?
            if let value = p.speed {
                speed = ReportedMotion.speed(value)
                if speed == nil { count("invalid speed") }
            }
            var course: Double?
            if let value = p.course {
                course = ReportedMotion.course(value)
                if course == nil { count("invalid course") }
            }
            var fix = Fix(
                time: time,
                coordinate: Coordinate(latitude: lat, longitude: lon),
                horizontalAccuracyMeters: accuracy,
                speedMetersPerSecond: speed,
                courseDegrees: course
            )
            if let previous = fixes.last { Self.deriveMotion(&fix, after: previous) }
            fixes.append(fix)
        }

        /// The longest gap across which a point's missing speed and course are derived.
        static let derivationMaxGap: Duration = .seconds(60)

        /// A point without speed (or course) gets the speed (and course) of the segment from the
        /// previous point, as a receiver deriving them from positions would know them (nothing
        /// from later points), when that point is at most `derivationMaxGap` earlier. Most GPX
        /// files carry neither; without them the power policy must assume any direction at
        /// `max_speed` (docs/power.md, "Tracks without accuracy, speed or course").
        static func deriveMotion(_ fix: inout Fix, after previous: Fix) {
            guard fix.speedMetersPerSecond == nil || fix.courseDegrees == nil else { return }
            let dt = (fix.time - previous.time).secondsValue
            guard dt > 0, fix.time - previous.time <= derivationMaxGap else { return }
            let distance = Geodesy.localDistanceMeters(from: previous.coordinate, to: fix.coordinate)
            guard distance.isFinite else { return }
            // A derived speed past `ReportedMotion`'s maximum is a position jump: left unknown.
            if fix.speedMetersPerSecond == nil { fix.speedMetersPerSecond = ReportedMotion.speed(distance / dt) }
            if fix.courseDegrees == nil, distance > 0 {
                fix.courseDegrees = Geodesy.localBearingDegrees(from: previous.coordinate, to: fix.coordinate)
            }
        }

        // MARK: bytes

        func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 }

        func starts(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard i + n <= b.count else { return false }
            let p = text.utf8Start
            for k in 0..<n where b[i + k] != p[k] { return false }
            return true
        }

        mutating func skip(past text: StaticString) {
            let n = text.utf8CodeUnitCount
            let p = text.utf8Start
            var j = i
            while j + n <= b.count {
                var match = true
                for k in 0..<n where b[j + k] != p[k] { match = false; break }
                if match { i = j + n; return }
                j += 1
            }
            i = b.count
        }

        func find(_ c: UInt8, from: Int) -> Int? {
            var j = from
            var quote: UInt8 = 0
            while j < b.count {
                let x = b[j]
                if quote != 0 {
                    if x == quote { quote = 0 }
                } else if x == 34 || x == 39 {
                    quote = x
                } else if x == c {
                    return j
                }
                j += 1
            }
            return nil
        }

        /// The element name without a namespace prefix, lowercased ASCII.
        func localName(_ s: Int, _ e: Int) -> String {
            var start = s
            for k in s..<e where b[k] == 58 { start = k + 1 }
            return String(decoding: b[start..<e].map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        }

        /// The element's text: comments left out and CDATA sections unwrapped, then trimmed.
        func trimmed(_ s: Int, _ e: Int) -> String {
            var s = s, e = e
            while s < e, isSpace(b[s]) { s += 1 }
            while e > s, isSpace(b[e - 1]) { e -= 1 }
            // Plain text (nearly always): no markup to take out.
            guard b[s..<e].contains(0x3C) else { return String(decoding: b[s..<e], as: UTF8.self) }
            var text = String(decoding: b[s..<e], as: UTF8.self)
            do {
                while let open = text.firstRange(of: "<!--") {
                    let close = text[open.upperBound...].firstRange(of: "-->")
                    text.removeSubrange(open.lowerBound..<(close?.upperBound ?? text.endIndex))
                }
                while let open = text.firstRange(of: "<![CDATA["), let close = text[open.upperBound...].firstRange(of: "]]>") {
                    text = String(text[..<open.lowerBound]) + text[open.upperBound..<close.lowerBound] + text[close.upperBound...]
                }
            }
            let space: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
            return String(text.drop(while: space).reversed().drop(while: space).reversed())
        }

        /// The value of attribute `name` (no namespace) in a start tag's attribute bytes.
        func attribute(_ name: String, in r: Range<Int>) -> String? {
            var j = r.lowerBound
            while j < r.upperBound {
                while j < r.upperBound, isSpace(b[j]) { j += 1 }
                let ns = j
                while j < r.upperBound, b[j] != 61, !isSpace(b[j]) { j += 1 }
                let attrName = String(decoding: b[ns..<j], as: UTF8.self)
                while j < r.upperBound, isSpace(b[j]) { j += 1 }
                guard j < r.upperBound, b[j] == 61 else { return nil }
                j += 1
                while j < r.upperBound, isSpace(b[j]) { j += 1 }
                guard j < r.upperBound, b[j] == 34 || b[j] == 39 else { return nil }
                let quote = b[j]
                j += 1
                let vs = j
                while j < r.upperBound, b[j] != quote { j += 1 }
                let value = trimmed(vs, j)
                j += 1
                if attrName == name { return value }
            }
            return nil
        }
    }
}

private func parseDouble(_ text: String) -> Double? {
    guard let v = Double(text), v.isFinite else { return nil }
    return v
}
