import CZlib

/// Reads members of a zip archive held in memory (a KMZ is one): the central directory at
/// the end, stored and deflated members (zlib's raw inflate). Not ZIP64, not encrypted.
/// A member may expand to at most `maxMemberBytes`, whatever its header claims.
struct ZipArchive {
    struct Member {
        let name: String
        let method: UInt16
        let compressedSize: Int
        let uncompressedSize: Int
        let localHeaderOffset: Int
    }

    struct Failure: Error {
        let message: String
    }

    /// As much as a place file may be (`ProfileDecoder.maxPlaceFileBytes`, 64 MiB): a small
    /// archive does not get round that limit by expanding.
    static let maxMemberBytes = 64 << 20

    let bytes: [UInt8]
    let members: [Member]

    init(_ bytes: [UInt8]) throws(Failure) {
        self.bytes = bytes
        // The end of central directory record: the last "PK\5\6" within the last 64 KiB + 22.
        guard bytes.count >= 22 else { throw Failure(message: "not a zip archive (too short)") }
        var end = -1
        var k = bytes.count - 22
        let lowest = max(0, bytes.count - 22 - 65_535)
        while k >= lowest {
            if bytes[k] == 0x50, bytes[k + 1] == 0x4B, bytes[k + 2] == 0x05, bytes[k + 3] == 0x06 {
                end = k
                break
            }
            k -= 1
        }
        guard end >= 0 else { throw Failure(message: "not a zip archive (no end of central directory)") }
        let count = Int(Self.u16(bytes, end + 10))
        let directorySize = Int(Self.u32(bytes, end + 12))
        let directoryOffset = Int(Self.u32(bytes, end + 16))
        if count == 0xFFFF || directoryOffset == 0xFFFF_FFFF { throw Failure(message: "ZIP64 archives are not supported") }
        guard directoryOffset + directorySize <= end else { throw Failure(message: "the zip central directory lies outside the file") }
        var members: [Member] = []
        var at = directoryOffset
        for _ in 0..<count {
            guard at + 46 <= end, Self.u32(bytes, at) == 0x0201_4B50 else { throw Failure(message: "a damaged zip central directory") }
            let flags = Self.u16(bytes, at + 8)
            let method = Self.u16(bytes, at + 10)
            let compressed = Int(Self.u32(bytes, at + 20))
            let uncompressed = Int(Self.u32(bytes, at + 24))
            let nameLength = Int(Self.u16(bytes, at + 28))
            let extraLength = Int(Self.u16(bytes, at + 30))
            let commentLength = Int(Self.u16(bytes, at + 32))
            let local = Int(Self.u32(bytes, at + 42))
            guard at + 46 + nameLength <= end else { throw Failure(message: "a damaged zip central directory") }
            let name = String(decoding: bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            if flags & 1 == 0 {
                members.append(Member(name: name, method: method, compressedSize: compressed, uncompressedSize: uncompressed, localHeaderOffset: local))
            }
            at += 46 + nameLength + extraLength + commentLength
        }
        self.members = members
    }

    /// The bytes of `member`.
    func read(_ member: Member) throws(Failure) -> [UInt8] {
        let at = member.localHeaderOffset
        guard at + 30 <= bytes.count, Self.u32(bytes, at) == 0x0403_4B50 else { throw Failure(message: "\(member.name): a damaged zip member header") }
        let start = at + 30 + Int(Self.u16(bytes, at + 26)) + Int(Self.u16(bytes, at + 28))
        guard start + member.compressedSize <= bytes.count else { throw Failure(message: "\(member.name): the member runs past the end of the archive") }
        let data = bytes[start..<(start + member.compressedSize)]
        switch member.method {
        case 0:
            return Array(data)
        case 8:
            return try Self.inflate(data, expected: member.uncompressedSize, name: member.name)
        default:
            throw Failure(message: "\(member.name): compression method \(member.method) is not supported (only stored and deflated)")
        }
    }

    private static func inflate(_ data: ArraySlice<UInt8>, expected: Int, name: String) throws(Failure) -> [UInt8] {
        guard expected <= maxMemberBytes else { throw Failure(message: "\(name): expands to \(expected) bytes, more than the \(maxMemberBytes >> 20) MiB a member may") }
        var out = [UInt8](repeating: 0, count: max(expected, 1))
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure(message: "\(name): cannot start zlib")
        }
        defer { inflateEnd(&stream) }
        var input = Array(data)
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            out.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, Int(stream.total_out) == expected else {
            throw Failure(message: "\(name): damaged compressed data (zlib status \(status), \(stream.total_out) of \(expected) bytes)")
        }
        return expected == 0 ? [] : out
    }

    static func u16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
    static func u32(_ b: [UInt8], _ at: Int) -> UInt32 { UInt32(u16(b, at)) | UInt32(u16(b, at + 2)) << 16 }
}
