/// The text of an XML place file (KML, GPX) as UTF-8: a file that opens with a declaration naming a Latin
/// encoding (`<?xml version="1.0" encoding="ISO-8859-1"?>`, windows-1252, as older Windows
/// tools write) is transcoded, so its names are read as written; anything else is taken as
/// UTF-8. Line breaks stay where they were, and every character stays one column.
enum XMLEncoding {
    /// `bytes`, transcoded to UTF-8 when the declaration names ISO-8859-1 or windows-1252.
    static func utf8(_ bytes: [UInt8]) -> [UInt8] {
        guard let name = declaredEncoding(bytes) else { return bytes }
        let windows: Bool
        switch name {
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso_8859-1": windows = false
        case "windows-1252", "cp1252", "x-cp1252": windows = true
        default: return bytes
        }
        guard bytes.contains(where: { $0 >= 0x80 }) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + bytes.count / 8)
        for byte in bytes {
            guard byte >= 0x80 else {
                out.append(byte)
                continue
            }
            let scalar = windows && (0x80...0x9F).contains(byte) ? windows1252[Int(byte) - 0x80] : UInt32(byte)
            out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8))
        }
        return out
    }

    /// The `encoding` of the XML declaration that opens the file, lowercased; nil without one,
    /// and for a file with a UTF-8 byte order mark (it is UTF-8, whatever it declares).
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        guard bytes.starts(with: Array("<?xml".utf8)) else { return nil }
        let head = bytes.prefix(256)
        guard let declaration = String(decoding: head, as: UTF8.self).split(separator: ">", maxSplits: 1).first,
              let at = declaration.firstRange(of: "encoding") else { return nil }
        var rest = declaration[at.upperBound...].drop(while: { $0 == " " || $0 == "=" })
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        rest = rest.dropFirst()
        return String(rest.prefix(while: { $0 != quote })).lowercased()
    }

    /// windows-1252's 0x80–0x9F (the five it leaves undefined as their ISO-8859-1 controls).
    private static let windows1252: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]
}
