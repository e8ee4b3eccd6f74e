import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// A Linux IIO accelerometer read from sysfs (`sources.motion`, `plugin: iio`): the raw axis
/// values `in_accel_{x,y,z}_raw` times the scale (`in_accel_scale`, or per axis
/// `in_accel_x_scale` …), in m/s². Each read opens and reads the files afresh, as sysfs wants.
public struct IIOAccelerometer: Sendable {
    public struct Failure: Error, CustomStringConvertible, Sendable, Equatable {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// The device's sysfs directory.
    public let directory: String
    private let scales: [Double]

    /// Where the kernel lists IIO devices.
    public static let devices = "/sys/bus/iio/devices"

    /// The first `iio:deviceN` under `root` that has `in_accel_x_raw`, or nil.
    public static func find(under root: String = devices) -> String? {
        guard let dir = opendir(root) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("iio:device") { names.append(name) }
        }
        let sorted = names.sorted { (Int($0.dropFirst(10)) ?? 0) < (Int($1.dropFirst(10)) ?? 0) }
        return sorted.map { root + "/" + $0 }.first { access($0 + "/in_accel_x_raw", R_OK) == 0 }
    }

    /// Opens the device at `directory`: its three axes and their scale must be readable.
    public init(directory: String) throws(Failure) {
        self.directory = directory
        var scales: [Double] = []
        for axis in ["x", "y", "z"] {
            guard access("\(directory)/in_accel_\(axis)_raw", R_OK) == 0 else {
                throw Failure(description: "\(directory) is no accelerometer: no readable in_accel_\(axis)_raw")
            }
            let scale = (try? Self.number("\(directory)/in_accel_\(axis)_scale")) ?? (try? Self.number("\(directory)/in_accel_scale"))
            guard let scale, scale.isFinite, scale > 0 else {
                throw Failure(description: "\(directory): no readable in_accel_scale (or in_accel_\(axis)_scale)")
            }
            scales.append(scale)
        }
        self.scales = scales
    }

    /// The acceleration now, m/s² per axis.
    public func read() throws(Failure) -> (x: Double, y: Double, z: Double) {
        var values: [Double] = []
        for (i, axis) in ["x", "y", "z"].enumerated() {
            values.append(try Self.number("\(directory)/in_accel_\(axis)_raw") * scales[i])
        }
        return (values[0], values[1], values[2])
    }

    /// The magnitude of the acceleration now, m/s².
    public func magnitude() throws(Failure) -> Double {
        let a = try read()
        return (a.x * a.x + a.y * a.y + a.z * a.z).squareRoot()
    }

    static func number(_ path: String) throws(Failure) -> Double {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw Failure(description: "cannot read \(path): \(n < 0 ? String(cString: strerror(errno)) : "empty")") }
        let text = String(decoding: buffer[0..<n], as: UTF8.self).trimmingWhitespace()
        guard let value = Double(text), value.isFinite else { throw Failure(description: "\(path) holds '\(text.prefix(20))', not a number") }
        return value
    }
}
