import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Files a command writes, checked against what it reads and against each other before it
/// starts: an output given the path of a track, the profile or the database would overwrite
/// it (a slip of the shell's history), and two outputs on one file would clobber each other.
/// `-` is standard output only where an option says so; elsewhere it is refused rather than
/// written as a file named `-`. Devices (`/dev/null`, a terminal) are no files to protect.
/// An output that cannot be written (no such directory, no permission) fails here too, not
/// after a long replay.
enum OutputPaths {
    /// `outputs` and `inputs`: (option, path or nil).
    static func check(outputs: [(String, String?)], inputs: [(String, String?)]) throws {
        var read: [Identity: String] = [:]
        for (option, path) in inputs {
            guard let path, path != "-", let identity = identity(path) else { continue }
            read[identity] = read[identity] ?? option
        }
        var written: [Identity: String] = [:]
        for (option, path) in outputs {
            guard let path else { continue }
            if path == "-" { throw UsageError("option '\(option)' takes a file name, not '-'") }
            guard let identity = identity(path) else { continue }
            if let other = read[identity] {
                throw UsageError("option '\(option)' names '\(path)', \(other == "TRACK" ? "a track" : "the file \(other) names"), which it would overwrite")
            }
            if let other = written[identity] {
                throw UsageError("options '\(other)' and '\(option)' name the same file '\(path)'")
            }
            written[identity] = option
            if let reason = unwritable(path) { throw CommandFailure("cannot write \(path) (\(option)): \(reason)") }
        }
    }

    /// Why `path` cannot be written, nil when it can: an existing file writable, or a directory
    /// to create it in.
    static func unwritable(_ path: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFDIR { return "it is a directory" }
            return access(path, W_OK) == 0 ? nil : String(cString: strerror(errno))
        }
        guard errno == ENOENT else { return String(cString: strerror(errno)) }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return access(directory, W_OK | X_OK) == 0 ? nil : String(cString: strerror(errno))
    }

    /// What names one file: an existing one by its device and inode (hard links and symbolic
    /// links alike); one not there yet by its real directory and its name.
    enum Identity: Hashable {
        case file(dev: UInt64, ino: UInt64)
        case new(String)
    }

    /// nil for a device or a pipe (writing to one overwrites nothing).
    static func identity(_ path: String) -> Identity? {
        var info = stat()
        if stat(path, &info) == 0 {
            let type = info.st_mode & S_IFMT
            if type == S_IFCHR || type == S_IFBLK || type == S_IFIFO || type == S_IFSOCK { return nil }
            return .file(dev: UInt64(info.st_dev), ino: UInt64(info.st_ino))
        }
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        guard let real = realpath(directory, nil) else { return .new(url.standardizedFileURL.path) }
        defer { free(real) }
        return .new(String(cString: real) + "/" + url.lastPathComponent)
    }
}
