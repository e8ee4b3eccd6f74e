import GeomonCore

/// One track format's parser behind one interface, fed chunks of any size: what
/// `TrackReader.read(bytes:name:)` runs over a buffer and `TrackStream` over a file. The line
/// formats parse as the bytes come; a GPX document is one XML tree, so its bytes are kept and
/// parsed at `finish`. Every format's fixes then pass the `TimeJumpFilter` (a fix dated far
/// from its neighbours is counted as `time jump`), so they come one fix later than parsed.
struct TrackParser {
    let format: TrackFormat
    private var parser: Parser
    private var timeJumps = TimeJumpFilter()
    /// The parser's fixes on their way to the filter (kept to reuse its storage).
    private var parsed: [Fix] = []

    private enum Parser {
        case nmea(NMEAParser)
        case jsonl(JSONLinesParser)
        case gpsd(GPSDJSONParser)
        case gpx(document: [UInt8], skipped: [String: Int])
    }

    init(format: TrackFormat) {
        self.format = format
        switch format {
        case .nmea: parser = .nmea(NMEAParser())
        case .jsonl: parser = .jsonl(JSONLinesParser())
        case .gpsdJSON: parser = .gpsd(GPSDJSONParser())
        case .gpx: parser = .gpx(document: [], skipped: [:])
        }
    }

    /// Counts of skipped input by reason, so far.
    var skipped: [String: Int] {
        var skipped: [String: Int] = switch parser {
        case let .nmea(p): p.skipped
        case let .jsonl(p): p.skipped
        case let .gpsd(p): p.skipped
        case let .gpx(_, skipped): skipped
        }
        if timeJumps.dropped > 0 { skipped["time jump", default: 0] += timeJumps.dropped }
        return skipped
    }

    /// Parses a chunk, appending the fixes it completed to `fixes`.
    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        parsed.removeAll(keepingCapacity: true)
        switch parser {
        case var .nmea(p):
            p.feed(bytes, into: &parsed)
            parser = .nmea(p)
        case var .jsonl(p):
            p.feed(bytes, into: &parsed)
            parser = .jsonl(p)
        case var .gpsd(p):
            p.feed(bytes, into: &parsed)
            parser = .gpsd(p)
        case .gpx(var document, let skipped):
            parser = .gpx(document: [], skipped: skipped)
            document += bytes
            parser = .gpx(document: document, skipped: skipped)
        }
        for fix in parsed { timeJumps.add(fix, into: &fixes) }
    }

    /// The input ended: appends the fixes still open (the last epoch, the whole GPX document).
    mutating func finish(into fixes: inout [Fix]) {
        parsed.removeAll(keepingCapacity: true)
        switch parser {
        case var .nmea(p):
            parsed += p.finish()
            parser = .nmea(p)
        case var .jsonl(p):
            parsed += p.finish()
            parser = .jsonl(p)
        case var .gpsd(p):
            parsed += p.finish()
            parser = .gpsd(p)
        case let .gpx(document, _):
            let (gpxFixes, skipped) = GPXParser.parse(document)
            parsed = gpxFixes
            parser = .gpx(document: [], skipped: skipped)
        }
        for fix in parsed { timeJumps.add(fix, into: &fixes) }
        timeJumps.finish(into: &fixes)
    }
}
