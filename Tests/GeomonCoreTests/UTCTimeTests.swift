import GeomonCore
import Testing

struct UTCTimeTests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", Int64(0)),
        ("2024-02-29T23:59:59.250Z", Int64(1_709_251_199_250)),
        ("2010-04-03T12:00:00+02:00", Int64(1_270_288_800_000)),
        ("1969-12-31T23:59:59Z", Int64(-1000)),
    ])
    func parsesRFC3339(text: String, millis: Int64) {
        #expect(UTCTime(rfc3339: text)?.millisecondsSince1970 == millis)
    }

    /// ISO 8601's basic-format offsets, as Java libraries write them (the rail-vehicle GPX in
    /// the shared tracks: `2019-01-15T00:00:27.000+0000`).
    @Test(arguments: [
        ("2019-01-15T00:00:27.000+0000", Int64(1_547_510_427_000)),
        ("2010-04-03T12:00:00+0200", Int64(1_270_288_800_000)),
        ("2010-04-03T12:00:00+02", Int64(1_270_288_800_000)),
        ("2010-04-03T09:30:00-0030", Int64(1_270_288_800_000)),
    ])
    func parsesBasicFormatOffsets(text: String, millis: Int64) {
        #expect(UTCTime(rfc3339: text)?.millisecondsSince1970 == millis)
    }

    /// Any stored value is written, however damaged (a database edited by hand): no overflow.
    @Test(arguments: [Int64.min, Int64.min + 1, -1, 0, Int64.max - 1, Int64.max])
    func extremeTimesAreWrittenWithoutOverflow(_ ms: Int64) {
        let text = UTCTime(millisecondsSince1970: ms).rfc3339
        #expect(text.hasSuffix("Z") && text.contains("T"))
        if ms == -1 { #expect(text == "1969-12-31T23:59:59.999Z") }
    }

    @Test(arguments: ["2024-02-29T23:59:59.250Z", "1970-01-01T00:00:00Z", "2099-12-31T00:00:01.001Z", "1969-12-31T23:59:59Z"])
    func formatsRoundTrip(text: String) {
        #expect(UTCTime(rfc3339: text)?.rfc3339 == text)
    }

    @Test(arguments: ["", "2024-13-01T00:00:00Z", "2024-01-01 00:00:00", "2024-01-01T00:00:00Zjunk", "2024-01-01T00:00:00.",
                       "2024-01-01T00:00:00+2", "2024-01-01T00:00:00+020", "2024-01-01T00:00:00+0260", "2024-01-01T00:00:00+25:00",
                       "2024-01-01T00:00:00+02:00junk", "2023-02-29T00:00:00Z", "2023-02-31T12:00:00Z", "2024-04-31T00:00:00Z",
                       "2100-02-29T00:00:00Z",
                       // Past the years 0000–9999 only by an offset.
                       "9999-12-31T23:59:59-01:00", "0000-01-01T00:00:00+01:00"])
    func rejectsMalformed(text: String) {
        #expect(UTCTime(rfc3339: text) == nil)
    }

    /// A leap second is the last millisecond of its minute, not the next minute's first (the
    /// instant of the report after it).
    @Test func aLeapSecondIsTheLastMillisecondOfItsMinute() {
        #expect(UTCTime(rfc3339: "2016-12-31T23:59:60Z")?.rfc3339 == "2016-12-31T23:59:59.999Z")
        #expect(UTCTime(rfc3339: "2016-12-31T23:59:60.5Z")?.rfc3339 == "2016-12-31T23:59:59.999Z")
        #expect(UTCTime(rfc3339: "9999-12-31T23:59:60Z")?.rfc3339 == "9999-12-31T23:59:59.999Z")
    }
}
