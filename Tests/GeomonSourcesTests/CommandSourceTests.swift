import Foundation
import GeomonCore
import GeomonSources
import GeomonTestSupport
import Testing

/// Waits on the plugin's stdout (as the daemon does) until it exits.
func runToExit(_ source: CommandSource, timeout: Duration = .seconds(20)) -> [CommandSource.Event] {
    var events: [CommandSource.Event] = []
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline, let fd = source.fileDescriptor {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, 200)
        events += source.readAvailable()
    }
    return events
}

@Suite(.serialized, .timeLimit(.minutes(3)))
struct CommandSourceTests {
    static let plugin = TestSupport.fixture("tracks/coarse-plugin.sh").path

    @Test func readsCoarseFixesAndCountsMalformedLines() throws {
        let source = CommandSource(arguments: ["/bin/sh", Self.plugin], restartInterval: .seconds(30))
        try source.start()
        #expect(source.isRunning && source.fileDescriptor != nil)
        let events = runToExit(source)
        let fixes = events.compactMap { if case .fix(let f) = $0 { f } else { nil } }
        #expect(fixes.map(\.time.rfc3339) == ["2024-05-01T12:00:00Z", "2024-05-01T12:05:00Z"])
        #expect(fixes.allSatisfy { $0.source == .coarse })
        #expect(fixes.map(\.horizontalAccuracyMeters) == [1500, 800])
        #expect(fixes[0].coordinate == Coordinate(latitude: 46.948, longitude: 7.4474))
        #expect(events.last == .exited(status: 0))
        #expect(source.malformedLines == 1)
        #expect(source.lastError?.hasPrefix("line 2: ") == true)
        #expect(!source.isRunning && source.fileDescriptor == nil)
    }

    /// The plugin runs as hooks do: a clean environment (the daemon's own variables stay with
    /// it) in its own process group.
    @Test func thePluginGetsACleanEnvironmentAndItsOwnProcessGroup() throws {
        setenv("GEOMON_TEST_SECRET", "s3cret", 1)
        defer { unsetenv("GEOMON_TEST_SECRET") }
        let script = #"n=$(env | grep -c '^GEOMON_TEST_SECRET='); g=$(ps -o pgid= -p $$ | tr -d ' '); "#
            + #"echo "{\"time\":\"2024-05-01T12:00:00Z\",\"lat\":$n,\"lon\":0,\"accuracy_m\":$(( g == $$ ? 1 : 2 ))}""#
        let source = CommandSource(arguments: ["/bin/sh", "-c", script], restartInterval: .seconds(30), home: "/nonexistent")
        try source.start()
        let fixes = runToExit(source).compactMap { if case .fix(let f) = $0 { f } else { nil } }
        #expect(fixes.count == 1)
        #expect(fixes.first?.coordinate.latitude == 0, "the plugin saw the daemon's environment")
        #expect(fixes.first?.horizontalAccuracyMeters == 1, "not the leader of its own process group")
        #expect(source.environment == ["PATH": CommandSource.path, "LANG": "C.UTF-8", "HOME": "/nonexistent"])
    }

    @Test func restartsWhenTheDaemonSaysSoAndCountsAcrossRuns() throws {
        let source = CommandSource(arguments: ["sh", Self.plugin, "3"], restartInterval: .seconds(30))
        try source.start()
        #expect(runToExit(source).last == .exited(status: 3))
        let exitedAt = ContinuousClock.now
        #expect(source.nextStart(after: exitedAt) == exitedAt + .seconds(30))
        try source.start()
        let second = runToExit(source)
        #expect(second.count == 3) // two fixes and the exit
        #expect(source.starts == 2)
        #expect(source.malformedLines == 2)
    }

    /// A plugin that exits while a process it started keeps its stdout open is still seen to
    /// end (the daemon restarts it), and what it left behind in its group is killed.
    @Test func aPluginThatExitsLeavingAChildOnItsStdoutIsSeenToEnd() throws {
        let script = #"echo '{"time":"2024-05-01T12:00:00Z","lat":1,"lon":2}'; sleep 1000 & echo $! > "$0"; exit 4"#
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let pidFile = dir.path("child.pid")
        let source = CommandSource(arguments: ["/bin/sh", "-c", script, pidFile], restartInterval: .seconds(30))
        try source.start()
        let events = runToExit(source, timeout: .seconds(10))
        #expect(events.compactMap { if case .fix(let f) = $0 { f } else { nil } }.count == 1)
        #expect(events.last == .exited(status: 4))
        #expect(!source.isRunning && source.fileDescriptor == nil)
        let child = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // Gone, or a zombie waiting for whoever adopted it.
        func ended() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        #expect(waitUntil(within: .seconds(5), ended), "the plugin's background child lives on")
    }

    @Test func aMissingProgramIsAClearError() {
        let source = CommandSource(arguments: ["/nonexistent/geomon-coarse"], restartInterval: .seconds(1))
        #expect { try source.start() } throws: { ($0 as? CommandSourceError)?.code == .notFound }
        let unnamed = CommandSource(arguments: ["no-such-geomon-plugin-xyz"], restartInterval: .seconds(1))
        #expect { try unnamed.start() } throws: { ($0 as? CommandSourceError)?.code == .notFound }
    }

    @Test func stopKillsAPluginThatNeverExits() throws {
        let source = CommandSource(arguments: ["/bin/sh", "-c", "echo '{\"time\":\"2024-05-01T12:00:00Z\",\"lat\":1,\"lon\":2}'; exec sleep 60"], restartInterval: .seconds(1))
        try source.start()
        let pid = try #require(source.processIdentifier)
        var got: [CommandSource.Event] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while got.isEmpty, ContinuousClock.now < deadline, let fd = source.fileDescriptor {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 200)
            got += source.readAvailable()
        }
        #expect(got.count == 1)
        source.stop()
        #expect(!source.isRunning)
        #expect(kill(pid, 0) == -1, "the plugin is gone")
    }
}
