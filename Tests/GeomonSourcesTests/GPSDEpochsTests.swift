import GeomonCore
import GeomonSources
import Testing

/// gpsd's epochs, synchronously: when a report's accuracy is known.
struct GPSDEpochsTests {
    static func fix(_ second: Int64, accuracy: Double = 5) -> Fix {
        Fix(time: UTCTime(millisecondsSince1970: second * 1000), coordinate: Coordinate(latitude: 46, longitude: 7), horizontalAccuracyMeters: accuracy)
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
}
