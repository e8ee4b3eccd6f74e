import Foundation
import GeomonCore

/// Deterministic JSON text for the few shapes geomon writes (strings, numbers, string arrays).
public enum JSONText {
    /// A JSON string literal with the required escapes.
    public static func string(_ text: String) -> String {
        JSONLiteral.string(text)
    }

    /// A JSON number; non-finite values become `null`. Integral values print without `.0`.
    public static func number(_ value: Double) -> String {
        JSONLiteral.number(value)
    }

    /// `value` rounded to `decimals` places, printed in its shortest form (`20.9`, not
    /// `20.900000000000002`): coordinates at 7 places are centimetres, accuracies at 1 a decimetre.
    public static func rounded(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "null" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return number((value * scale).rounded() / scale)
    }

    public static func array(_ strings: [String]) -> String {
        "[" + strings.map(string).joined(separator: ",") + "]"
    }

    /// Parses a JSON array of strings (nil when it is anything else).
    public static func parseStringArray(_ text: String) -> [String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else { return nil }
        return object as? [String]
    }
}
