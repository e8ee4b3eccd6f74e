import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files a command writes, checked against what it reads and against each other before it
/// starts: an output given the path of a track, the profile or the database would overwrite
/// it (a slip of the shell's history), and two outputs on one file would clobber each other.
/// `-` is standard output only where an option says so; elsewhere it is refused rather than
/// written as a file named `-`. Devices (`/dev/null`, a terminal) are no files to protect.
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
        }
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
