import GeomonConfig
public import GeomonStore
#if canImport(Glibc)
import Glibc
#endif

/// Checks on the database path before geomon writes to it (docs/security.md).
public enum DatabaseTrust {
    /// Why the database at `path` must not be used, or nil. An existing database file must
    /// not be group- or world-writable; as root, the directory holding it is walked from `/`
    /// like a profile path (owned by root, not writable by others, no symlink through a place
    /// another user controls), so no one else can swap the file or its -wal/-shm under geomon.
    /// `insecurePermissions` (`--insecure-permissions`) turns the checks off.
    public static func problem(path: String, insecurePermissions: Bool = false) -> String? {
        guard path != ":memory:" else { return nil }
        let trust = FileTrust(enforced: !insecurePermissions)
        if trust.uid == 0 {
            let directory = directoryOf(path)
            if let problem = trust.problem(directory, what: "database directory", shown: directory) { return problem }
        }
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, let problem = trust.problem(path, what: "database", shown: path) {
            return problem
        }
        return nil
    }

    /// A warning when the database at `path` (it holds the location history) may be read by
    /// other users: group or world read permission. Nil for a private one, or none yet.
    public static func exposure(path: String) -> String? {
        guard path != ":memory:" else { return nil }
        var info = stat()
        // An empty file is made private when it becomes a database (`EventStore`).
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0, info.st_mode & 0o044 != 0 else { return nil }
        return "\(path) is readable by other users (mode \(String(info.st_mode & 0o777, radix: 8))) and holds the location history; 'chmod 600 \(path)' (its -wal and -shm files follow the database's mode)"
    }

    private static func directoryOf(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The one-line message for a database write failure: the path, SQLite's reason and
    /// what to do. Nothing after the last commit was stored (each batch is one transaction).
    public static func writeFailure(path: String, _ error: SQLiteError) -> String {
        var text = "\(path): cannot write the database: \(error.message) (SQLite error \(error.code)"
        if error.extended != error.code { text += ", extended \(error.extended)" }
        text += ")"
        var fs = statvfs()
        if statvfs(directoryOf(path), &fs) == 0, fs.f_flag & 1 != 0 { // 1 = ST_RDONLY
            return text + "; the database is on a read-only file system: remount it read-write or use another --db"
        }
        switch error.code {
        case 13: text += "; free some space and run the same command again: it resumes after the last committed fix"
        case 8: text += "; the file or its file system is read-only"
        case 10: text += "; an I/O error: check the disk"
        default: break
        }
        return text
    }

    /// One writer per database: takes `path`'s instance lock, or throws the message to show
    /// (another instance holds it; or the lock file cannot be created, said as what it means
    /// for the database: read-only file system, permissions).
    public static func lock(databasePath path: String, role: String = "run") throws(DatabaseLockError) -> InstanceLock {
        do {
            return try InstanceLock(databasePath: path, role: role)
        } catch let busy as InstanceLock.Busy {
            throw DatabaseLockError(message: "\(busy)", busy: true)
        } catch let failed as InstanceLock.Failed {
            var text = "\(path): cannot write the database: cannot create its lock file \(failed.path): \(failed.reason)"
            var fs = statvfs()
            if statvfs(directoryOf(path), &fs) == 0, fs.f_flag & 1 != 0 { // 1 = ST_RDONLY
                text += "; the database is on a read-only file system: remount it read-write or use another --db"
            }
            throw DatabaseLockError(message: text, busy: false)
        } catch {
            throw DatabaseLockError(message: "\(error)", busy: false)
        }
    }
}

/// Why a database's instance lock was not taken (`DatabaseTrust.lock`).
public struct DatabaseLockError: Error, CustomStringConvertible, Sendable {
    public var message: String
    /// Another process holds it.
    public var busy: Bool
    public var description: String { message }
}
