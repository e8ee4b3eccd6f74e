public import Foundation

/// Paths and helpers shared by all test targets.
public enum TestSupport {
    /// The package root, found from this source file's location.
    public static let packageRoot: URL = {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent() // GeomonTestSupport
            .deletingLastPathComponent() // Sources
            .deletingLastPathComponent()
    }()

    /// `Tests/Fixtures/<relative>`.
    public static func fixture(_ relative: String) -> URL {
        packageRoot.appendingPathComponent("Tests/Fixtures").appendingPathComponent(relative)
    }

    /// The built `geomon` binary, next to the running test bundle.
    public static var geomonBinary: URL {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        // The test runner may live inside a `.xctest` bundle directory.
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("geomon")
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue {
                return candidate
            }
            dir = dir.deletingLastPathComponent()
        }
        return packageRoot.appendingPathComponent(".build/debug/geomon")
    }
}

/// A fresh directory under the system temp dir, removed by `remove()` (or left for inspection).
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(prefix: String = "geomon-test") throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory())
        url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    public func write(_ name: String, _ text: String, mode: Int? = nil) throws -> String {
        let target = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: target)
        if let mode {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: target.path)
        }
        return target.path
    }

    /// A hook program `NAME.sh` that appends one line per run to `NAME.log`: the values of
    /// `variables` (e.g. `GEOMON_EVENT`), space-separated. Returns both paths.
    public func recordingHook(_ name: String, _ variables: [String]) throws -> (hook: String, log: String) {
        let log = path(name + ".log")
        let format = variables.map { _ in "%s" }.joined(separator: " ")
        let values = variables.map { "\"$\($0)\"" }.joined(separator: " ")
        let hook = try write(name + ".sh", "#!/bin/sh\nprintf '\(format)\\n' \(values) >> '\(log)'\n", mode: 0o755)
        return (hook, log)
    }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// What a finished child process produced.
public struct ProcessResult: Sendable {
    public var exitCode: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs a program to completion with the given stdin, capturing stdout and stderr.
public func runProcess(
    _ executable: URL,
    _ arguments: [String],
    stdin: String? = nil,
    environment: [String: String]? = nil,
    currentDirectory: URL? = nil
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let currentDirectory { process.currentDirectoryURL = currentDirectory }
    let out = Pipe(), err = Pipe(), input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    // Drain both pipes concurrently so a chatty child never blocks on a full pipe.
    let group = DispatchGroup()
    nonisolated(unsafe) var outData = Data(), errData = Data()
    group.enter()
    DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    group.enter()
    DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
    group.wait()
    return ProcessResult(
        exitCode: process.terminationStatus,
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self)
    )
}

/// Runs the built `geomon` binary.
public func runGeomon(_ arguments: [String], stdin: String? = nil, currentDirectory: URL? = nil) throws -> ProcessResult {
    try runProcess(TestSupport.geomonBinary, arguments, stdin: stdin, currentDirectory: currentDirectory)
}

/// A unix socket of `type` (`SOCK_STREAM`, `SOCK_DGRAM`) bound to `path`; nil when it cannot
/// be made. The caller closes it.
public func boundUnixSocket(_ path: String, type: Int32) -> Int32? {
    let fd = socket(AF_UNIX, type, 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0 else {
        close(fd)
        return nil
    }
    return fd
}

/// Polls `condition` every `interval` until it holds or `limit` has passed; whether it held.
/// The one way tests wait: what they wait for — a file, a log line, a row, a process's state —
/// is made by another process, and nothing announces it but its appearing.
@discardableResult
public func waitUntil(within limit: Duration = .seconds(30), every interval: Duration = .milliseconds(20),
                      _ condition: () throws -> Bool) rethrows -> Bool {
    let end = ContinuousClock.now + limit
    while ContinuousClock.now < end {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: interval.seconds)
    }
    return try condition()
}

/// `waitUntil` for async tests: it waits without holding a thread, so the other suites'
/// time limits run meanwhile.
@discardableResult
public func waitUntil(within limit: Duration = .seconds(30), every interval: Duration = .milliseconds(100),
                      _ condition: () throws -> Bool) async throws -> Bool {
    let end = ContinuousClock.now + limit
    while ContinuousClock.now < end {
        if try condition() { return true }
        try await Task.sleep(for: interval)
    }
    return try condition()
}

extension Duration {
    /// In seconds, as a floating-point number.
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
