/// Why a geomon database cannot be used. Each case says what to do about it.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The file does not exist (read-only open) or cannot be opened.
        case missing
        /// The file is not an SQLite database, or it is damaged. It is never overwritten.
        case notADatabase
        /// The schema version is newer than this geomon knows.
        case newerSchema
        /// The schema is older than this geomon and the database was opened read-only.
        case olderSchema
        /// A row the caller named is not there (a delivery id that was never stored).
        case noSuchRow
    }

    public var kind: Kind
    public var path: String
    public var message: String

    public init(_ kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}
