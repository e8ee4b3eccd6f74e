public import GeomonCore

/// A recorded track: its fixes in file order, and what had to be skipped.
public struct Track: Sendable {
    public var path: String
    /// The detected format: "nmea", "gpx", "jsonl", "gpsd-json".
    public var format: String
    public var fixes: [Fix]
    /// Counts of skipped input by reason ("bad checksum", "no fix", "garbage", ...).
    public var skipped: [String: Int]

    public init(path: String, format: String, fixes: [Fix], skipped: [String: Int] = [:]) {
        self.path = path
        self.format = format
        self.fixes = fixes
        self.skipped = skipped
    }
}

extension Track {
    /// How many pieces of input (lines, sentences, points) were skipped.
    public var skippedCount: Int { skipped.values.reduce(0, +) }

    /// "0 skipped", or "12 skipped (10 bad checksum, 2 no fix)": reasons by count, then name.
    public var skippedText: String {
        let reasons = skipped.filter { $0.value > 0 }.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
        guard !reasons.isEmpty else { return "0 skipped" }
        return "\(skippedCount) skipped (" + reasons.map { "\($0.value) \($0.key)" }.joined(separator: ", ") + ")"
    }

    /// The error for a track that holds no usable fix (exit 65), naming why input was skipped.
    public var noFixError: TrackError? {
        guard fixes.isEmpty else { return nil }
        return TrackError(path: path, message: "no usable fix in this \(format) track: \(skippedText)", isMissing: false)
    }
}

/// Why a track could not be read at all.
public struct TrackError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var message: String
    /// True when the file is missing or unreadable (exit 66), false when its content is bad (65).
    public var isMissing: Bool
    public init(path: String, message: String, isMissing: Bool) {
        self.path = path
        self.message = message
        self.isMissing = isMissing
    }
    public var description: String { "\(path): \(message)" }
}

/// The formats `TrackReader` understands.
public enum TrackFormat: String, Sendable, CaseIterable {
    case nmea
    case gpx
    case jsonl
    case gpsdJSON = "gpsd-json"

    /// Detects the format from the first 64 KiB of content (never from the file name):
    /// XML with a `gpx` element (`<gpx`, or prefixed: `<ns0:gpx`) → GPX; JSON objects with a `"class"` member → gpsd JSON;
    /// other JSON objects → JSON lines; `$`/`!` sentences → NMEA. Comment lines (`#`), blank
    /// lines and NUL/garbage bytes before the first sentence are passed over.
    public static func detect(_ bytes: UnsafeBufferPointer<UInt8>) -> TrackFormat? {
        let head = UnsafeBufferPointer(rebasing: bytes[0..<min(bytes.count, 65_536)])
        var jsonLines = 0, classLines = 0, nmeaLines = 0
        var sawXML = false
        var i = 0
        while i < head.count {
            var e = i
            while e < head.count, head[e] != 10, head[e] != 13 { e += 1 }
            var s = i
            // Skip a UTF-8 BOM, whitespace and NUL noise at the start of the line.
            while s < e, head[s] == 0 || head[s] == 32 || head[s] == 9 || head[s] == 0xEF || head[s] == 0xBB || head[s] == 0xBF { s += 1 }
            if s < e {
                switch head[s] {
                case 60: // '<'
                    if hasGPXElement(head, s..<e) { return .gpx }
                    sawXML = true
                case 123: // '{'
                    jsonLines += 1
                    if hasGPSDClass(head, s..<e) { classLines += 1 }
                case 36, 33: // '$', '!'
                    nmeaLines += 1
                default:
                    // Noise before a sentence on the same line (receiver restart).
                    if contains(head, s..<e, "$G") { nmeaLines += 1 }
                }
            }
            i = e + 1
        }
        if sawXML, hasGPXElement(head, 0..<head.count) { return .gpx }
        if classLines > 0 { return .gpsdJSON }
        if jsonLines > 0, jsonLines >= nmeaLines { return .jsonl }
        if nmeaLines > 0 { return .nmea }
        return nil
    }

    /// A `gpx` element: `<gpx`, or with a namespace prefix (`<ns0:gpx`, as Python's
    /// ElementTree writes it without a default namespace).
    private static func hasGPXElement(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
        if contains(b, r, "<gpx") { return true }
        func isNameByte(_ c: UInt8) -> Bool {
            (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c == 95 || c == 45 || c == 46
        }
        var j = r.lowerBound
        while j < r.upperBound {
            if b[j] == 60 {
                var k = j + 1
                while k < r.upperBound, isNameByte(b[k]) { k += 1 }
                if k > j + 1, k + 4 <= r.upperBound, b[k] == 58, b[k + 1] == 103, b[k + 2] == 112, b[k + 3] == 120,
                   k + 4 == r.upperBound || !isNameByte(b[k + 4]) { return true }
            }
            j += 1
        }
        return false
    }

    /// A gpsd report's class: `"class"`, a colon and an upper-case name (`"class":"TPV"`,
    /// `"class": "VERSION"`). A JSON-lines track may carry a `class` of its own (`"class":"car"`):
    /// that is no gpsd report.
    private static func hasGPSDClass(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
        let key = Array("\"class\"".utf8)
        var j = r.lowerBound
        while j + key.count <= r.upperBound {
            defer { j += 1 }
            guard b[j] == key[0], (0..<key.count).allSatisfy({ b[j + $0] == key[$0] }) else { continue }
            var k = j + key.count
            func skipSpaces() { while k < r.upperBound, b[k] == 32 || b[k] == 9 { k += 1 } }
            skipSpaces()
            guard k < r.upperBound, b[k] == 58 else { continue } // ':'
            k += 1
            skipSpaces()
            guard k < r.upperBound, b[k] == 34 else { continue } // '"'
            k += 1
            let start = k
            while k < r.upperBound, b[k] >= 65, b[k] <= 90 { k += 1 }
            if k - start >= 2, k < r.upperBound, b[k] == 34 { return true }
        }
        return false
    }

    private static func contains(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>, _ needle: StaticString) -> Bool {
        let n = needle.utf8CodeUnitCount
        let p = needle.utf8Start
        guard r.count >= n else { return false }
        var j = r.lowerBound
        while j + n <= r.upperBound {
            var match = true
            for k in 0..<n where b[j + k] != p[k] { match = false; break }
            if match { return true }
            j += 1
        }
        return false
    }
}

/// Reads NMEA 0183, GPX, JSON lines and gpsd JSON tracks, detecting the format from content.
/// See docs/sources.md for what each reader accepts and how accuracy is derived.
public enum TrackReader {
    /// Reads and parses a file. Missing or unreadable files throw with `isMissing`; content in
    /// no known format throws without it. Bad lines inside a known format are skipped and counted.
    public static func read(path: String) throws(TrackError) -> Track {
        var stream = try TrackStream(path: path)
        var fixes: [Fix] = []
        while let fix = stream.next() { fixes.append(fix) }
        if let problem = stream.readError {
            throw TrackError(path: path, message: "cannot read file (\(problem))", isMissing: true)
        }
        return Track(path: path, format: stream.format.rawValue, fixes: fixes, skipped: stream.skipped)
    }

    /// Parses a track held in memory; `name` is used as the track's path and in errors.
    public static func read(bytes: [UInt8], name: String) throws(TrackError) -> Track {
        let result: Result<Track, TrackError> = bytes.withUnsafeBufferPointer { buffer in
            guard !buffer.isEmpty else {
                return .failure(TrackError(path: name, message: "empty file", isMissing: false))
            }
            guard let format = TrackFormat.detect(buffer) else {
                return .failure(TrackError(path: name, message: "not a track: expected NMEA 0183, GPX, JSON lines or gpsd JSON", isMissing: false))
            }
            var parser = TrackParser(format: format)
            var fixes: [Fix] = []
            parser.feed(buffer, into: &fixes)
            parser.finish(into: &fixes)
            return .success(Track(path: name, format: format.rawValue, fixes: fixes, skipped: parser.skipped))
        }
        return try result.get()
    }
}
