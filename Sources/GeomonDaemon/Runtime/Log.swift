#if canImport(Glibc)
import Glibc
#endif
import GeomonCore

/// Log levels, ordered; numeric values are syslog priorities (journald reads `<N>` prefixes).
public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    /// Ordered by verbosity: `.error < .warning < … < .debug`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public init?(name: String) {
        switch name.lowercased() {
        case "error": self = .error
        case "warning", "warn": self = .warning
        case "notice": self = .notice
        case "info": self = .info
        case "debug": self = .debug
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }
}

/// A structured logger writing one line per message to standard error.
///
/// Messages are constant strings; data goes into dotted metadata keys (swift-log's practice):
/// `log.info("fix received", ["fix.hacc_m": "4.2"])`. Under systemd (`JOURNAL_STREAM` set) each
/// line starts with a `<priority>` prefix that journald turns into the entry's level; on a
/// terminal or in a file each line starts with a UTC timestamp and the level name.
public final class Log: @unchecked Sendable {
    public var level: LogLevel
    private let journald: Bool
    private let lock = Mutex()
    /// Where lines go; tests capture them.
    private let sink: @Sendable (String) -> Void

    public init(level: LogLevel = .notice, journald: Bool? = nil, sink: (@Sendable (String) -> Void)? = nil) {
        self.level = level
        self.journald = journald ?? (getenv("JOURNAL_STREAM") != nil)
        self.sink = sink ?? { line in
            var bytes = Array(line.utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
                if n < 0 { if errno == EINTR { continue }; return }
                bytes = bytes.dropFirst(n)
            }
        }
    }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ metadata: @autoclosure () -> KeyValuePairs<String, String> = [:]) {
        guard level <= self.level else { return }
        var line = journald ? "<\(level.rawValue)>" : "\(SystemHostClock.wall().rfc3339) \(level.name) "
        line += message()
        for (key, value) in metadata() {
            line += " \(key)=\(Log.quote(value))"
        }
        line += "\n"
        lock.withLock { sink(line) }
    }

    public func error(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> KeyValuePairs<String, String> = [:]) { log(.error, message(), metadata()) }
    public func warning(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> KeyValuePairs<String, String> = [:]) { log(.warning, message(), metadata()) }
    public func notice(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> KeyValuePairs<String, String> = [:]) { log(.notice, message(), metadata()) }
    public func info(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> KeyValuePairs<String, String> = [:]) { log(.info, message(), metadata()) }
    public func debug(_ message: @autoclosure () -> String, _ metadata: @autoclosure () -> KeyValuePairs<String, String> = [:]) { log(.debug, message(), metadata()) }

    /// Values with spaces, quotes or control characters are quoted so a line stays one line.
    static func quote(_ value: String) -> String {
        let needsQuoting = value.isEmpty || value.unicodeScalars.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.value < 0x20 || $0.value == 0x7F }
        guard needsQuoting else { return value }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\x" + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// A pthread mutex for the few places that share state across threads.
public final class Mutex: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    public init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}
