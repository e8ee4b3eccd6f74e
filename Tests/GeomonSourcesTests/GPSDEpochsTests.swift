import GeomonCore
import GeomonSources
import Testing

/// gpsd's epochs, synchronously: when a report completes its epoch (its accuracy and a
/// course known), and what the held reports merge to.
struct GPSDEpochsTests {
    /// A report at `second`, with the receiver's course unless `course` is nil.
    static func fix(_ second: Int64, accuracy: Double = 5, course: Double? = 90) -> Fix {
        Fix(time: UTCTime(millisecondsSince1970: second * 1000), coordinate: Coordinate(latitude: 46, longitude: 7), horizontalAccuracyMeters: accuracy,
            speedMetersPerSecond: course == nil ? nil : 1, courseDegrees: course)
    }

    @Test func aReportWithItsAccuracyIsAFixAtOnceAndOnlyOnce() {
        var epochs = GPSDEpochs()
        #expect(epochs.reported(Self.fix(1), accuracyKnown: true) == [Self.fix(1)])
        #expect(epochs.reported(Self.fix(1), accuracyKnown: true).isEmpty)
        #expect(epochs.pending == nil)
    }

    @Test func aReportWithoutAccuracyWaitsForItsEpochsAccuracy() {
        var epochs = GPSDEpochs()
        let unknown = Self.fix(1, accuracy: 50)
        #expect(epochs.reported(unknown, accuracyKnown: false).isEmpty)
        #expect(epochs.pending == unknown)
        // The same epoch again, now with `eph`: that one is the fix.
        #expect(epochs.reported(Self.fix(1, accuracy: 4), accuracyKnown: true) == [Self.fix(1, accuracy: 4)])
        #expect(epochs.pending == nil)
    }

    @Test func theNextEpochOrTheBudgetReleasesAHeldFixAsItIs() {
        var epochs = GPSDEpochs()
        _ = epochs.reported(Self.fix(1, accuracy: 50), accuracyKnown: false)
        #expect(epochs.reported(Self.fix(2), accuracyKnown: true) == [Self.fix(1, accuracy: 50), Self.fix(2)])
        _ = epochs.reported(Self.fix(3, accuracy: 50), accuracyKnown: false)
        #expect(epochs.flush() == [Self.fix(3, accuracy: 50)])
        #expect(epochs.flush().isEmpty)
        // Released is given: a late report of that epoch adds nothing.
        #expect(epochs.reported(Self.fix(3), accuracyKnown: true).isEmpty)
    }

    /// A report with its accuracy but no course (gpsd's own speed from the positions, before
    /// the receiver's RMC) waits for the epoch's course; the epoch's accuracy stays when the
    /// later report has none, and an epoch that never gets a course goes as merged.
    @Test func anAccurateReportWithoutACourseWaitsForTheReceiversVelocity() {
        var epochs = GPSDEpochs()
        var computed = Self.fix(1, accuracy: 4, course: nil)
        computed.speedMetersPerSecond = 14.7
        #expect(epochs.reported(computed, accuracyKnown: true).isEmpty)
        var own = Self.fix(1, accuracy: 50)
        own.speedMetersPerSecond = 0.5
        let merged = epochs.reported(own, accuracyKnown: false)
        #expect(merged.map(\.horizontalAccuracyMeters) == [4] && merged.map(\.speedMetersPerSecond) == [0.5] && merged.map(\.courseDegrees) == [90])
        _ = epochs.reported(Self.fix(2, course: nil), accuracyKnown: true)
        #expect(epochs.reported(Self.fix(3, course: nil), accuracyKnown: true) == [Self.fix(2, course: nil)])
        // At rest a receiver leaves its course empty: a speed of zero completes the epoch.
        var resting = Self.fix(4, course: nil)
        resting.speedMetersPerSecond = 0
        #expect(epochs.reported(resting, accuracyKnown: true) == [Self.fix(3, course: nil), resting])
        #expect(epochs.pending == nil)
    }

    /// Two receivers on one gpsd report the same GPS second: the first to report keeps the
    /// epoch; the other's report is not merged into it.
    @Test func anotherDevicesReportOfTheSameInstantIsNotMerged() {
        var epochs = GPSDEpochs()
        var first = Self.fix(1, accuracy: 4, course: nil)
        first.speedMetersPerSecond = 2
        #expect(epochs.reported(first, accuracyKnown: true, device: "/dev/ttyACM0").isEmpty)
        var other = Self.fix(1, accuracy: 50)
        other.coordinate = Coordinate(latitude: 47, longitude: 8)
        #expect(epochs.reported(other, accuracyKnown: true, device: "/dev/ttyUSB0").isEmpty)
        #expect(epochs.flush() == [first])
        // An epoch released by the next one's report: the next is that device's to keep.
        var held = Self.fix(3, accuracy: 4, course: nil)
        held.speedMetersPerSecond = 3
        #expect(epochs.reported(held, accuracyKnown: true, device: "/dev/ttyACM0").isEmpty)
        var next = Self.fix(4, accuracy: 4, course: nil)
        next.speedMetersPerSecond = 3
        #expect(epochs.reported(next, accuracyKnown: true, device: "/dev/ttyUSB0") == [held])
        let completing = Self.fix(4, accuracy: 50)
        #expect(epochs.reported(completing, accuracyKnown: false, device: "/dev/ttyUSB0").map(\.courseDegrees) == [90])
    }
}
