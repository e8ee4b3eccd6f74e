import FoundationEssentials
import GeomonCore
import GeomonFormat

/// `geomon bench activity`: the accelerometer's activity classifier (`MotionDetector`) on a
/// labelled recording: its confusion matrix and detection latency.
struct BenchActivityCommand: GeomonCommand {
    static let spec = CommandSpec(
        "bench activity",
        abstract: "Scores the accelerometer's activity classifier on a labelled recording",
        discussion: """
        FILE is CSV with the header `t_s,ax,ay,az,label[,segment]`: seconds, the acceleration in
        m/s² and the true class (`still`, `foot` or `vehicle`); a `segment` column separates
        recordings (each starts the classifier afresh). Every segment is read at --rate (the
        sample nearest each 1/rate s, as `sources.motion.sample` reads the device) through the
        classifier `geomon run` uses, with --window, the thresholds of `sources.motion` and
        --settle.
        Once a window is full, each second's answer is scored: `still` when the spread stays
        under --threshold, else the sensed activity. Prints one JSON line per true class
        (its row of the confusion matrix, counts of seconds; the still words said, `still_after`
        (60 s) without movement, and the seconds scored under one), then one with the accuracy and
        each segment's detection latency: the seconds from its start to the first right answer.
        With --changes the segments play one after another through one classifier (each
        segment's start a change of activity), so the latency is that of noticing a change.
        """,
        options: [
            .option("--rate", "HZ", "samples per second read from the recording (default 2, sources.motion.sample's default)"),
            .option("--window", "SECONDS", "the classifier's window (default 10)"),
            .option("--threshold", "M/S2", "movement above this standard deviation (default 0.15)"),
            .option("--foot-threshold", "M/S2", "foot above this standard deviation (default 2)"),
            .option("--settle", "SECONDS", "foot after a vehicle once foot was the majority of the windows over this long (default 120, geomon run's; 0: every window at once)"),
            .flag("--changes", "play the segments back to back through one classifier (see above)"),
        ],
        arguments: [ArgumentSpec("FILE", "a labelled accelerometer recording (CSV)", completion: .file(["csv"]))]
    )

    var path: String
    var rate: Double
    var window: Double
    var threshold: Double
    var footThreshold: Double
    var settle: Double
    var changes: Bool

    init(_ arguments: ParsedArguments) throws {
        guard let first = arguments.positionals.first else { throw CommandFailure("bench activity: FILE is required", exitCode: .usage) }
        path = first
        rate = try arguments.double("--rate", in: 0.01...1000) ?? 2
        window = try arguments.double("--window", in: 0.1...3600) ?? 10
        threshold = try arguments.double("--threshold", in: 0...100) ?? 0.15
        footThreshold = try arguments.double("--foot-threshold", in: 0...100) ?? 2
        settle = try arguments.double("--settle", in: 0...3600) ?? MotionDetector.defaultSettle.secondsValue
        changes = arguments.flag("--changes")
    }

    static let classes = ["still", "foot", "vehicle"]

    private func newDetector() -> MotionDetector {
        MotionDetector(stillAfter: .seconds(60), window: .milliseconds(Int64(window * 1000)),
                       thresholdMetersPerSecondSquared: threshold, footThresholdMetersPerSecondSquared: footThreshold,
                       settle: .milliseconds(Int64(settle * 1000)))
    }

    struct Sample {
        var t: Double
        var magnitude: Double
        var label: String
    }

    func run() throws -> Int32 {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw CommandFailure("bench activity: cannot read \(path)", exitCode: .noInput)
        }
        let segments = try Self.segments(text, path: path)
        var matrix = Array(repeating: Array(repeating: 0, count: Self.classes.count), count: Self.classes.count)
        // Per true class: still words said (`still_after` without movement: the receiver goes
        // off), and the seconds scored under one.
        var stillWords = Array(repeating: 0, count: Self.classes.count)
        var underStill = Array(repeating: 0, count: Self.classes.count)
        var latencies: [String] = []
        var detector = newDetector()
        // With --changes one clock runs across the segments; else each starts at 0.
        var offset = 0.0
        var firstScore = window
        for samples in segments {
            guard let start = samples.first?.t, let end = samples.last?.t else { continue }
            if !changes {
                detector = newDetector()
                offset = 0
                firstScore = window
            }
            var next = 0, nextScore = max(firstScore, offset), firstRight: Double?
            var k = 0
            while true {
                let t = start + Double(k) / rate
                guard t <= end else { break }
                k += 1
                while next + 1 < samples.count, abs(samples[next + 1].t - t) <= abs(samples[next].t - t) { next += 1 }
                let sample = samples[next]
                let clock = offset + t - start
                let word = detector.sample(magnitude: sample.magnitude, at: .milliseconds(Int64(clock * 1000)))
                let truth = Self.classes.firstIndex(of: sample.label)
                if word == .still, let truth { stillWords[truth] += 1 }
                guard clock >= nextScore else { continue }
                nextScore += 1
                let answer = detector.isMoving ? (detector.activity?.rawValue ?? "vehicle") : "still"
                guard let truth, let said = Self.classes.firstIndex(of: answer) else { continue }
                matrix[truth][said] += 1
                if detector.reported == .still { underStill[truth] += 1 }
                if truth == said, firstRight == nil { firstRight = clock - offset }
            }
            latencies.append("{\"label\":\"\(samples[0].label)\",\"latency_s\":\(firstRight.map { NumberText.short($0, 1) } ?? "null")}")
            offset += end - start + 1 / rate
        }
        let total = matrix.joined().reduce(0, +)
        let right = Self.classes.indices.reduce(0) { $0 + matrix[$1][$1] }
        for (i, name) in Self.classes.enumerated() {
            var o = JSONObject()
            o.add("true", name)
            for (j, said) in Self.classes.enumerated() { o.add(said, matrix[i][j]) }
            o.add("still_words", stillWords[i])
            o.add("under_still_word_s", underStill[i])
            print(o.text)
        }
        var summary = JSONObject()
        summary.add("rate_hz", rate, decimals: 3)
        summary.add("window_s", window, decimals: 3)
        summary.add("settle_s", settle, decimals: 3)
        summary.add("seconds_scored", total)
        summary.add("accuracy", total > 0 ? Double(right) / Double(total) : 0, decimals: 4)
        summary.add("segments", raw: "[" + latencies.joined(separator: ",") + "]")
        print(summary.text)
        return 0
    }

    /// The recording's samples by segment, in order; a line that does not parse is an error
    /// naming its line.
    static func segments(_ text: String, path: String) throws -> [[Sample]] {
        var lines = text.split(whereSeparator: \.isNewline).makeIterator()
        guard let header = lines.next()?.split(separator: ",").map({ $0.trimmingWhitespace() }) else { return [] }
        func column(_ name: String) throws -> Int {
            guard let k = header.firstIndex(of: Substring(name)) else { throw CommandFailure("bench activity: \(path) has no column '\(name)'", exitCode: .dataError) }
            return k
        }
        let (t, x, y, z, label) = (try column("t_s"), try column("ax"), try column("ay"), try column("az"), try column("label"))
        let segment = header.firstIndex(of: "segment")
        var out: [[Sample]] = []
        var current: Substring?
        var number = 1
        while let line = lines.next() {
            number += 1
            let f = line.split(separator: ",", omittingEmptySubsequences: false)
            guard f.count == header.count, let ts = Double(f[t]), let ax = Double(f[x]), let ay = Double(f[y]), let az = Double(f[z]),
                  ts.isFinite, ax.isFinite, ay.isFinite, az.isFinite else {
                throw CommandFailure("bench activity: \(path):\(number): not a sample (t_s,ax,ay,az,label[,segment])", exitCode: .dataError)
            }
            let key = segment.map { f[$0] } ?? ""
            if out.isEmpty || key != current {
                out.append([])
                current = key
            }
            out[out.count - 1].append(Sample(t: ts, magnitude: (ax * ax + ay * ay + az * az).squareRoot(), label: String(f[label])))
        }
        return out
    }
}
