/// What a fence id may be, wherever it comes from (a profile, a GeoJSON feature's id or
/// property, a zone file): 1 to 128 characters, no control characters, and no space at either
/// end. Spaces inside are kept (`Praha 17`, a district's name used as its id); events, hooks'
/// environment and JSON carry the id exactly as written.
enum FenceIDRule {
    static let maxCharacters = 128

    /// Why `text` cannot be an id (a phrase after "fence 'id' …"), or nil when it can.
    static func problem(_ text: String) -> String? {
        if text.isEmpty { return "must not be empty" }
        if text.count > maxCharacters { return "must be at most \(maxCharacters) characters (got \(text.count))" }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) }) {
            return "must not contain control characters (got \(String(reflecting: text.clipped)))"
        }
        if let first = text.unicodeScalars.first, let last = text.unicodeScalars.last,
           first.properties.isWhitespace || last.properties.isWhitespace {
            return "must not begin or end with a space (got '\(text.clipped)')"
        }
        return nil
    }
}
