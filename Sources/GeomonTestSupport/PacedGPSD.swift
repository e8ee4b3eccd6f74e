public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real gpsd reading a recorded NMEA log at the pace it was recorded: a feeder thread serves
/// the log on a loopback TCP port, each epoch (the sentences between changes of the RMC/GGA time)
/// sent when its recorded time comes, and `gpsd -N -n tcp://127.0.0.1:FEED` reads it.
///
/// gpsfake paces by sentence; this paces by the recording's own clock, so a client whose clock
/// runs at real speed (`geomon run`) sees each epoch when a receiver would have sent it. The
/// feed starts on `start()` (after the client connected). `stop()` kills gpsd and ends the
/// feeder; `deinit` does too.
public final class PacedGPSD: @unchecked Sendable {
    public let port: UInt16
    private let feedPort: UInt16
    private let epochs: [[String]]
    private let offsets: [Double]
    private let process: Process
    private let listener: Int32
    private let lock = NSLock()
    private var startRequested = false
    private var stopped = false
    private var finishedFlag = false
    private var thread: Thread?

    /// - Parameters:
    ///   - log: an NMEA 0183 log.
    ///   - seconds: only the epochs within this long of the first.
    public init(log: URL, seconds: Double = .infinity) throws {
        guard GPSFakeHarness.isAvailable else {
            throw GPSFakeError(message: "gpsd not installed (apt-get install gpsd)")
        }
        let text = try String(contentsOf: log, encoding: .isoLatin1)
        var epochs: [[String]] = [], offsets: [Double] = []
        var current: [String] = []
        var currentTime: Double?
        var first: Double?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = String(raw).trimmingCharacters(in: .controlCharacters)
            guard line.hasPrefix("$") else { continue }
            if let t = Self.time(of: line), t != currentTime {
                if let currentTime, !current.isEmpty {
                    epochs.append(current)
                    offsets.append(currentTime - (first ?? currentTime))
                    current = []
                }
                if first == nil { first = t }
                currentTime = t
            }
            current.append(line)
        }
        if let currentTime, !current.isEmpty {
            epochs.append(current)
            offsets.append(currentTime - (first ?? currentTime))
        }
        let kept = offsets.firstIndex { $0 > seconds } ?? offsets.count
        self.epochs = Array(epochs[..<kept])
        self.offsets = Array(offsets[..<kept])

        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = listener
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 1) == 0 else { throw GPSFakeError(message: "feeder: cannot listen") }
        feedPort = UInt16(bigEndian: address.sin_port)
        port = try GPSFakeHarness.freePort()

        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-s", "KILL", String(GPSFakeHarness.safetySeconds), GPSFakeHarness.gpsd, "-N", "-n", "-S", String(port),
                             "tcp://127.0.0.1:\(feedPort)"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let feeder = Thread { [weak self] in self?.feed() }
        thread = feeder
        feeder.start()
        let deadline = ContinuousClock.now + .seconds(15)
        while !GPSFakeHarness.accepts(port: port) {
            if !process.isRunning || ContinuousClock.now > deadline {
                stop()
                throw GPSFakeError(message: "gpsd did not start listening on 127.0.0.1:\(port)")
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// The recording's duration that is served.
    public var duration: Double { offsets.last ?? 0 }

    /// Writes the served epochs as an NMEA log (what replay should read for the same input).
    public func writeServedLog(to url: URL) throws {
        try Data(epochs.flatMap { $0 }.map { $0 + "\r\n" }.joined().utf8).write(to: url)
    }

    /// Starts sending the epochs (the first at once).
    public func start() {
        lock.lock()
        startRequested = true
        lock.unlock()
    }

    /// True once every epoch was sent.
    public var finished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return finishedFlag
    }

    private var shouldStop: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private var started: Bool {
        lock.lock()
        defer { lock.unlock() }
        return startRequested
    }

    private func feed() {
        let client = accept(listener, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        while !started { if shouldStop { return }; usleep(5_000) }
        let origin = ContinuousClock.now
        for (epoch, offset) in zip(epochs, offsets) {
            let due = origin + .milliseconds(Int64(offset * 1000))
            while ContinuousClock.now < due {
                if shouldStop { return }
                let left = due - ContinuousClock.now
                usleep(UInt32(max(1000, min(20_000, left.components.seconds * 1_000_000 + left.components.attoseconds / 1_000_000_000_000))))
            }
            // A receiver's epoch as one burst: gpsd reports it as soon as it has it, so a client's
            // clock anchored on fix times lags the recording by no more than a millisecond.
            let bytes = Array(epoch.map { $0 + "\r\n" }.joined().utf8)
            if bytes.withUnsafeBytes({ send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) < 0 { return }
        }
        lock.lock()
        finishedFlag = true
        lock.unlock()
        // Keep the connection open: gpsd reports the device gone when it closes.
        while !shouldStop { usleep(20_000) }
    }

    /// Seconds since midnight of an RMC or GGA sentence's time field.
    static func time(of line: String) -> Double? {
        let fields = line.split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count > 1, fields[0].hasSuffix("RMC") || fields[0].hasSuffix("GGA") else { return nil }
        let t = fields[1]
        guard t.count >= 6, let h = Double(t.prefix(2)), let m = Double(t.dropFirst(2).prefix(2)), let s = Double(t.dropFirst(4)) else { return nil }
        return h * 3600 + m * 60 + s
    }

    /// Stops gpsd and the feeder. Idempotent.
    public func stop() {
        lock.lock()
        let already = stopped
        stopped = true
        lock.unlock()
        guard !already else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        let pid = process.processIdentifier
        if pid > 0 {
            if getpgid(pid) == pid { kill(-pid, SIGKILL) }
            if process.isRunning { kill(pid, SIGKILL) }
            process.waitUntilExit()
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while GPSFakeHarness.accepts(port: port), ContinuousClock.now < deadline { usleep(20_000) }
    }
}
