@testable import GeomonDaemon
import GeomonTestSupport
import Foundation
import Testing

struct LogTests {
    final class Lines: @unchecked Sendable {
        var lines: [String] = []
    }

    @Test func metadataValuesWithSpacesOrNewlinesStayOnOneLine() {
        let captured = Lines()
        let log = Log(level: .debug, journald: true) { captured.lines.append($0) }
        log.warning("hook failed", ["hook.cmd": "notify \"x\"\nrm", "hook.exit_code": "2"])
        #expect(captured.lines == ["<4>hook failed hook.cmd=\"notify \\\"x\\\"\\nrm\" hook.exit_code=2\n"])
    }

    @Test func messagesBelowTheLevelAreNotFormatted() {
        let captured = Lines()
        let log = Log(level: .notice, journald: true) { captured.lines.append($0) }
        var evaluated = false
        log.debug({ evaluated = true; return "expensive" }())
        log.notice("kept")
        #expect(!evaluated)
        #expect(captured.lines == ["<5>kept\n"])
    }

    @Test(arguments: [("debug", LogLevel.debug), ("WARN", .warning), ("error", .error)])
    func levelNamesParse(name: String, level: LogLevel) {
        #expect(LogLevel(name: name) == level)
    }
}

struct InstanceLockTests {
    @Test func aSecondLockOnTheSameDatabaseIsRefusedWithThePid() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = dir.path("state.db")
        let first = try InstanceLock(databasePath: db)
        #expect(throws: InstanceLock.Busy.self) { _ = try InstanceLock(databasePath: db) }
        do {
            _ = try InstanceLock(databasePath: db)
        } catch let busy as InstanceLock.Busy {
            #expect(busy.holder == String(getpid()))
            #expect(busy.description.contains("another geomon instance"))
        }
        withExtendedLifetime(first) {}
    }

    @Test func theLockIsReleasedWhenItsOwnerGoesAway() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let db = dir.path("state.db")
        do { _ = try InstanceLock(databasePath: db) }
        let again = try InstanceLock(databasePath: db)
        let attributes = try FileManager.default.attributesOfItem(atPath: again.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }
}

struct SystemdNotifierTests {
    @Test func readyAndStatusArriveOnTheNotifySocket() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("notify.sock")
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)

        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000"])
        #expect(notifier.isActive)
        #expect(notifier.watchdogIntervalMilliseconds == 2000)
        notifier.ready(status: "watching 3 fences")
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = recv(fd, &buffer, buffer.count, 0)
        #expect(n > 0)
        #expect(String(decoding: buffer[0..<max(0, n)], as: UTF8.self) == "READY=1\nSTATUS=watching 3 fences")
    }

    @Test func withoutNotifySocketNothingIsSent() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isActive)
        #expect(notifier.watchdogIntervalMilliseconds == nil)
        notifier.ready(status: "x")
    }
}

@Suite(.serialized)
struct EventLoopTests {
    @Test func aTimeoutWithNoInputReturnsZeroAfterSleeping() throws {
        let loop = try EventLoop()
        let start = (SystemHostClock.monotonicMicroseconds() / 1000)
        #expect(loop.runOnce(timeoutMilliseconds: 30) == 0)
        #expect((SystemHostClock.monotonicMicroseconds() / 1000) - start >= 25)
    }

    @Test func aWakeFromAnotherThreadInterruptsTheSleep() throws {
        let loop = try EventLoop()
        nonisolated(unsafe) var received: [UInt8] = []
        loop.onWake = { received += $0 }
        let wakeFD = loop.wakeWrite
        let thread = Thread { usleep(20_000); var b: UInt8 = 7; _ = write(wakeFD, &b, 1) }
        thread.start()
        #expect(loop.runOnce(timeoutMilliseconds: 10_000) == 1)
        #expect(received == [7])
    }

    @Test func aReadableDescriptorRunsItsHandler() throws {
        let loop = try EventLoop()
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var fired = 0
        loop.watch(fds[0]) { _ in
            var b: UInt8 = 0
            _ = read(fds[0], &b, 1)
            fired += 1
        }
        var byte: UInt8 = 1
        _ = write(fds[1], &byte, 1)
        loop.runOnce(timeoutMilliseconds: 1000)
        #expect(fired == 1)
        loop.unwatch(fds[0])
        _ = write(fds[1], &byte, 1)
        loop.runOnce(timeoutMilliseconds: 10)
        #expect(fired == 1)
    }

    @Test func aSignalBecomesAByteOnTheLoopThread() throws {
        let loop = try EventLoop()
        nonisolated(unsafe) var received: [UInt8] = []
        loop.onWake = { received += $0 }
        SignalForwarding.install(into: loop, signals: [SIGUSR1])
        defer { SignalForwarding.uninstall(signals: [SIGUSR1]) }
        kill(getpid(), SIGUSR1)
        loop.runOnce(timeoutMilliseconds: 1000)
        #expect(received == [SignalForwarding.byte(for: SIGUSR1)])
    }
}
