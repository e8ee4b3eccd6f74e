@testable import GeomonDaemon
import GeomonTestSupport
import Foundation
import GeomonCore
#if canImport(Glibc)
import Glibc
#endif
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
            #expect(busy.holder == String(getpid()) && busy.role == "run")
            #expect(busy.description.contains("another geomon instance is already running") && busy.description.hasSuffix(", geomon run)"))
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
        let fd = try #require(boundUnixSocket(path, type: Int32(SOCK_DGRAM.rawValue)))
        defer { close(fd) }

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
/// The driver's loop on the system clock: one poll(2) over the services' descriptors, with a
/// timeout to the earliest deadline.
struct DriverLoopTests {
    /// A service polling one pipe; counts what it read.
    final class PipeService: EventSource {
        let name = "pipe"
        let pipe: WakePipe
        var polled = true
        var read: [UInt8] = []
        init() throws { pipe = try WakePipe() }
        var pollRequest: PollRequest? { polled ? PollRequest(fd: pipe.readFD, events: Int16(POLLIN)) : nil }
        func process(revents: Int16, _ driver: DriverContext) throws { read += pipe.drain() }
    }

    static func driver(_ services: [any Service]) -> MonitorDriver {
        MonitorDriver(machine: Monitor(profile: Profile(name: "loop", mode: .continuous)), journal: nil,
                      clock: LiveClock(host: SystemHostClock()), services: services)
    }

    @Test func aTimeoutWithNoInputReturnsAfterSleeping() throws {
        let clock = LiveClock(host: SystemHostClock())
        let start = clock.monotonic
        var polls: [pollfd] = []
        #expect(clock.wait(&polls, until: start + 30_000, realDeadline: nil, holding: false) == .deadline)
        #expect(clock.monotonic - start >= 25_000)
    }

    @Test func aWakeFromAnotherThreadInterruptsTheSleep() throws {
        let service = try PipeService()
        let driver = Self.driver([service])
        let pipe = service.pipe
        // The wake comes later on purpose: the wait must block until it and return with it.
        let thread = Thread { Thread.sleep(forTimeInterval: 0.02); pipe.wake(7) }
        thread.start()
        #expect(try driver.step() == .progressed)
        #expect(service.read == [7])
    }

    @Test func aReadableDescriptorIsProcessedByItsService() throws {
        let service = try PipeService()
        let driver = Self.driver([service])
        service.pipe.wake(1)
        #expect(try driver.step() == .progressed)
        #expect(service.read == [1])
        // Not polled any more: its input waits.
        service.polled = false
        service.pipe.wake(2)
        let other = try PipeService()
        let second = Self.driver([service, other])
        other.pipe.wake(3)
        #expect(try second.step() == .progressed)
        #expect(service.read == [1] && other.read == [3])
    }

    @Test func aSignalBecomesAnInputOnTheLoopThread() throws {
        let signals = try SignalService(log: Log(level: .error))
        let driver = Self.driver([signals])
        try driver.start()
        defer { driver.stop() }
        kill(getpid(), SIGUSR1)
        #expect(try driver.step() == .progressed)
        #expect(signals.pollRequest != nil)
        // SIGTERM: the next steps stop the driver.
        kill(getpid(), SIGTERM)
        var outcome = try driver.step()
        while outcome == .progressed { outcome = try driver.step() }
        #expect(outcome == .finished && driver.stopReason == "signal")
    }
}

struct DirectoryTests {
    @Test func makeDirectoriesCreatesParentsPrivatelyAndAcceptsExistingOnes() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let deep = dir.url.path + "/a/b/c"
        try makeDirectories(deep)
        try makeDirectories(deep)
        var info = stat()
        #expect(stat(deep, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        let file = try dir.write("plain", "x")
        #expect(throws: DirectoryError.self) { try makeDirectories(file + "/below") }
        do {
            try makeDirectories(file)
            Issue.record("a file passed for a directory")
        } catch {
            #expect(error.path == file)
            #expect(error.reason == String(cString: strerror(ENOTDIR)))
        }
    }

    @Test func temporaryDirectoriesAreNewAndPrivate() throws {
        let a = try makeTemporaryDirectory(prefix: "geomon-test-tmp")
        let b = try makeTemporaryDirectory(prefix: "geomon-test-tmp")
        defer { rmdir(a); rmdir(b) }
        #expect(a != b)
        var info = stat()
        #expect(stat(a, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }
}

struct StartupPagesTests {
    /// Handing the touched code pages back lowers the resident file-backed memory, and the
    /// code they held runs again afterwards (its pages fault back in).
    @Test func releasingStartupPagesLowersResidentFileMemoryAndNothingBreaks() throws {
        let before = try #require(StartupPages.residentFileKB())
        guard let released = StartupPages.release() else {
            // A kernel without MADV_PAGEOUT (Linux < 5.4): nothing to measure.
            return
        }
        #expect(released.beforeKB >= before / 2)
        #expect(released.afterKB < released.beforeKB)
        let log = Log(level: .error, journald: false) { _ in }
        log.error("still runs")
        #expect(directoryPart(of: "/a/b") == "/a")
    }
}
