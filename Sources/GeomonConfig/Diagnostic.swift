public import GeomonCore

/// One problem found in a profile or an input file, reported compiler-style.
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
    public enum Severity: String, Hashable, Sendable {
        case error
        case warning
        case note
    }

    /// What the diagnostic is about, where a caller treats some apart.
    public enum Topic: String, Hashable, Sendable {
        case general
        /// A GeoJSON ring defect that the even-odd rule reads through (a warning unless strict).
        case ringDefect
    }

    public var severity: Severity
    public var location: SourceLocation?
    public var message: String
    public var topic: Topic = .general
    /// The file a diagnostic without a position is about (a profile that cannot be read);
    /// with a position, its file is `location.file`.
    public var file: String?

    public init(_ severity: Severity, at location: SourceLocation?, _ message: String) {
        self.severity = severity
        self.location = location
        self.message = message
    }

    public static func error(_ message: String, at location: SourceLocation?) -> Diagnostic {
        Diagnostic(.error, at: location, message)
    }

    public static func warning(_ message: String, at location: SourceLocation?) -> Diagnostic {
        Diagnostic(.warning, at: location, message)
    }

    /// `path:line:column: error: message` (clang style), or `path: error: message` without a position.
    public var description: String {
        if let location {
            return "\(location): \(severity.rawValue): \(message)"
        }
        if let file {
            return "\(file): \(severity.rawValue): \(message)"
        }
        return "\(severity.rawValue): \(message)"
    }
}
