import Foundation
import GeomonCore
import GeomonSources
import GeomonTestSupport
import Testing

/// `sources.motion`'s two plugins: a command's `{"moving": …}` lines, and an IIO accelerometer
/// read from a directory laid out like sysfs.
struct MotionSourceTests {
    @Test func aMotionCommandsLinesAreReadAndBadOnesCounted() throws {
        let script = #"echo '{"moving": false, "time": "2024-05-01T12:00:00Z"}'; echo 'still'; echo '{"moving": "yes"}'; "#
            + #"echo '{"moving": true}'; echo '{"moving": true, "time": "noon"}'; printf '{"moving": false}'"#
        let source = CommandSource(arguments: ["/bin/sh", "-c", script], restartInterval: .seconds(30), lines: .motion)
        try source.start()
        let events = runToExit(source)
        let said = events.compactMap { event -> Motion? in if case .motion(let m) = event { m.motion } else { nil } }
        #expect(events.allSatisfy { if case .motion(let m) = $0 { m.activity == nil } else { true } })
        #expect(said == [.still, .moving, .still])
        #expect(events.last == .exited(status: 0))
        #expect(source.malformedLines == 3)
        #expect(source.lastError?.hasPrefix("line 5: ") == true)
    }

    @Test func aMotionLineMayNameWhatCarriesTheDevice() throws {
        var parser = MotionLinesParser()
        let words = parser.feed(Array("""
            {"moving": true, "activity": "vehicle"}
            {"activity": "foot", "time": "2024-05-01T12:00:00Z"}
            {"moving": true, "activity": "horse"}
            {"moving": false, "activity": null}
            {"time": "2024-05-01T12:00:01Z"}
            {"moving": "true", "activity": "foot"}

            """.utf8))
        #expect(words == [
            MotionWord(.moving, activity: .vehicle),
            MotionWord(nil, activity: .foot, time: UTCTime(rfc3339: "2024-05-01T12:00:00Z")),
            MotionWord(.still),
        ])
        // A `moving` that is not true or false spoils the whole line, activity and all.
        #expect(parser.skipped == ["bad activity": 1, "no moving": 1, "bad moving": 1])
    }

    static func device(_ dir: TemporaryDirectory, _ name: String = "iio:device1", x: Int, y: Int, z: Int, scale: String? = "0.009806") throws -> String {
        _ = try dir.write("\(name)/name", "lis3dh\n")
        for (axis, value) in [("x", x), ("y", y), ("z", z)] { _ = try dir.write("\(name)/in_accel_\(axis)_raw", "\(value)\n") }
        if let scale { _ = try dir.write("\(name)/in_accel_scale", scale + "\n") }
        return dir.path(name)
    }

    @Test func anIIOAccelerometerIsFoundAndReadInMetresPerSecondSquared() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try dir.write("iio:device0/in_voltage0_raw", "512\n")   // an ADC, no accelerometer
        let path = try Self.device(dir, x: 0, y: 0, z: 1000)
        #expect(IIOAccelerometer.find(under: dir.path("")) == path)
        let sensor = try IIOAccelerometer(directory: path)
        #expect(abs(try sensor.magnitude() - 9.806) < 1e-9)
        // The kernel rewrites the values; each read sees the new ones.
        _ = try dir.write("iio:device1/in_accel_x_raw", "600\n")
        _ = try dir.write("iio:device1/in_accel_z_raw", "800\n")
        #expect(abs(try sensor.magnitude() - 9.806) < 1e-9)
        #expect(abs(try sensor.read().x - 5.8836) < 1e-9)
    }

    @Test func aMissingOrUnreadableAccelerometerIsAClearError() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(IIOAccelerometer.find(under: dir.path("")) == nil)
        #expect(IIOAccelerometer.find(under: "/nonexistent/iio") == nil)
        #expect(throws: IIOAccelerometer.Failure(description: "\(dir.path("none")) is no accelerometer: no readable in_accel_x_raw")) {
            _ = try IIOAccelerometer(directory: dir.path("none"))
        }
        let noScale = try Self.device(dir, x: 0, y: 0, z: 1000, scale: nil)
        #expect(throws: IIOAccelerometer.Failure.self) { _ = try IIOAccelerometer(directory: noScale) }
        let garbage = try Self.device(dir, "iio:device2", x: 0, y: 0, z: 1000)
        let sensor = try IIOAccelerometer(directory: garbage)
        _ = try dir.write("iio:device2/in_accel_y_raw", "n/a\n")
        do {
            _ = try sensor.read()
            Issue.record("read a value that is no number")
        } catch {
            #expect(error.description.contains("in_accel_y_raw holds 'n/a', not a number"), "\(error)")
        }
    }
}
