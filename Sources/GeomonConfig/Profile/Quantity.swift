import GeomonFormat
/// Physical quantities written with units in profiles (`150m`, `2km`, `30s`, `40m/s`, `120mW`).
///
/// A bare number is the base unit: metres, seconds, metres per second or milliwatts.
enum Quantity: Sendable {
    case distance
    case duration
    case speed
    case power
    case acceleration
    case frequency

    /// Unit suffix → factor to the base unit.
    var units: [(String, Double)] {
        switch self {
        case .distance: [("m", 1), ("km", 1000)]
        case .duration: [("ms", 0.001), ("s", 1), ("m", 60), ("min", 60), ("h", 3600), ("d", 86400)]
        case .speed: [("m/s", 1), ("km/h", 1 / 3.6)]
        case .power: [("mW", 1), ("W", 1000)]
        case .acceleration: [("m/s2", 1), ("m/s²", 1), ("m/s^2", 1)]
        case .frequency: [("Hz", 1), ("mHz", 0.001)]
        }
    }

    var noun: String {
        switch self {
        case .distance: "a distance"
        case .duration: "a duration"
        case .speed: "a speed"
        case .power: "a power"
        case .acceleration: "an acceleration"
        case .frequency: "a frequency"
        }
    }

    var examples: String {
        switch self {
        case .distance: "150m or 2km"
        case .duration: "30s, 5m or 2h"
        case .speed: "30m/s or 90km/h"
        case .power: "120mW or 1.5W"
        case .acceleration: "1m/s2 or 0.3m/s²"
        case .frequency: "2Hz or 500mHz"
        }
    }

    var unitList: String {
        switch self {
        case .distance: "m or km"
        case .duration: "ms, s, m (minutes), h or d"
        case .speed: "m/s or km/h"
        case .power: "mW or W"
        case .acceleration: "m/s2 (also m/s² or m/s^2)"
        case .frequency: "Hz or mHz"
        }
    }

    /// The base unit's symbol, used in range messages.
    var baseUnit: String {
        switch self {
        case .distance: "m"
        case .duration: "s"
        case .speed: "m/s"
        case .power: "mW"
        case .acceleration: "m/s2"
        case .frequency: "Hz"
        }
    }

    /// The largest value accepted (in the base unit), keeping arithmetic and `Duration` safe.
    var maximum: Double {
        switch self {
        case .distance: 20_037_509 // half the Earth's circumference
        case .duration: 3650 * 86400 // ten years
        case .speed: 3000
        case .power: 100_000
        case .acceleration: 1000
        case .frequency: 1000
        }
    }

    var maximumText: String {
        switch self {
        case .distance: "20000km"
        case .duration: "3650d"
        case .speed: "3000m/s"
        case .power: "100W"
        case .acceleration: "1000m/s2"
        case .frequency: "1000Hz"
        }
    }

    enum Parsed: Equatable {
        case value(Double)
        case notANumber
        case unknownUnit(String)
    }

    /// Splits `text` into a number and a unit and converts to the base unit.
    func parse(_ text: String) -> Parsed {
        let scalars = Array(text.unicodeScalars)
        var k = 0
        if k < scalars.count && (scalars[k] == "-" || scalars[k] == "+") { k += 1 }
        var digits = 0
        while k < scalars.count, ("0"..."9").contains(scalars[k]) { k += 1; digits += 1 }
        if k < scalars.count && scalars[k] == "." {
            k += 1
            while k < scalars.count, ("0"..."9").contains(scalars[k]) { k += 1; digits += 1 }
        }
        guard digits > 0 else { return .notANumber }
        if k + 1 < scalars.count && (scalars[k] == "e" || scalars[k] == "E") {
            var e = k + 1
            if scalars[e] == "-" || scalars[e] == "+" { e += 1 }
            var expDigits = 0
            while e < scalars.count, ("0"..."9").contains(scalars[e]) { e += 1; expDigits += 1 }
            if expDigits > 0 { k = e }
        }
        let numberText = String(String.UnicodeScalarView(scalars[0..<k]))
        guard let number = Double(numberText), number.isFinite else { return .notANumber }
        let unit = String(String.UnicodeScalarView(scalars[k...])).trimmingSpaces
        if unit.isEmpty { return .value(number) }
        guard let factor = units.first(where: { $0.0 == unit })?.1 else { return .unknownUnit(unit) }
        return .value(number * factor)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}

/// Compact number text for messages: `150`, `0.5`.
func formatNumber(_ value: Double) -> String {
    NumberText.shortest(value)
}

/// A distance as a profile writes it (`40`, `40m`, `0.2km`), for commands that take one.
public enum DistanceText {
    /// Metres; nil when `text` is not a distance.
    public static func meters(_ text: String) -> Double? {
        guard case let .value(meters) = Quantity.distance.parse(text) else { return nil }
        return meters
    }
}
