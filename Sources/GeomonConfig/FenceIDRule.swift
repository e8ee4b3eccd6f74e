/// What a fence id may be, wherever it comes from (a profile, a GeoJSON feature's id or
/// property, a zone file): 1 to 128 characters, no control characters, and no space at either
/// end. Spaces inside are kept (`Praha 17`, a district's name used as its id); events, hooks'
/// environment and JSON carry the id exactly as written.
public enum FenceIDRule {
    public static let maxCharacters = 128

    /// Why `text` cannot be an id (a phrase after "fence 'id' …"), or nil when it can.
    public static func problem(_ text: String) -> String? {
        if text.isEmpty { return "must not be empty" }
        // The usual id: printable ASCII without a space at either end, decided on its bytes
        // (a fence file of 10^5 features checks 10^5 ids).
        if text.utf8.withContiguousStorageIfAvailable(isPlainASCII) == true { return nil }
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

    /// True when `bytes` are 1 to 128 printable ASCII characters without a space at either
    /// end (a valid id); false when the full check must decide.
    private static func isPlainASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, let last = bytes.last, bytes.count <= maxCharacters,
              first != 0x20, last != 0x20 else { return false }
        for b in bytes where b < 0x20 || b >= 0x7F { return false }
        return true
    }
}
