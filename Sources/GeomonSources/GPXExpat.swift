public import GeomonCore
import CExpat
#if canImport(Glibc)
import Glibc
#endif

/// GPX read through libexpat, the conforming XML parser: the same points and rules as
/// `GPXParser`'s scanner (`GPXParser.finish`), with entities decoded and the document checked
/// as XML; a well-formedness error ends the reading, keeping the points before it (counted as
/// `truncated` inside a point, `malformed XML` elsewhere). `geomon bench tracks` measures both.
public enum GPXExpat {
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> (fixes: [Fix], skipped: [String: Int]) {
        let reader = Reader()
        // Without namespace processing (a cost of its own): a name is "prefix:local" or "local".
        guard let parser = XML_ParserCreate(nil) else { return ([], ["out of memory": 1]) }
        defer { XML_ParserFree(parser) }
        XML_SetUserData(parser, Unmanaged.passUnretained(reader).toOpaque())
        XML_SetElementHandler(parser, { data, name, attributes in
            Reader.from(data).start(name, attributes)
        }, { data, name in
            Reader.from(data).end(name)
        })
        XML_SetCharacterDataHandler(parser, { data, text, length in
            Reader.from(data).text(text, length)
        })
        var offset = 0
        var failed = false
        // XML_Parse takes an int length: a larger document in pieces.
        repeat {
            let length = min(bytes.count - offset, 1 << 30)
            let last: Int32 = offset + length == bytes.count ? 1 : 0
            let base = bytes.baseAddress.map { UnsafeRawPointer($0 + offset).assumingMemoryBound(to: CChar.self) }
            if XML_Parse(parser, base, Int32(length), last) == XML_STATUS_ERROR {
                failed = true
                break
            }
            offset += length
        } while offset < bytes.count
        if failed || reader.point != nil {
            reader.skipped[reader.point != nil ? "truncated" : "malformed XML", default: 0] += 1
        }
        return (reader.fixes, reader.skipped)
    }

    private final class Reader {
        var fixes: [Fix] = []
        var skipped: [String: Int] = [:]
        var point: GPXParser.Point?
        var extensionsDepth = 0
        /// The point's child element whose text is being collected, and its bytes.
        var field: Field?
        var text: [UInt8] = []

        enum Field { case time, hdop, fix, speed, course }

        static func from(_ data: UnsafeMutableRawPointer?) -> Reader {
            Unmanaged<Reader>.fromOpaque(data!).takeUnretainedValue()
        }

        func start(_ name: UnsafePointer<CChar>?, _ attributes: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
            let local = Self.localName(name)
            if extensionsDepth > 0 {
                if Self.equals(local, "extensions") { extensionsDepth += 1 }
                return
            }
            if Self.equals(local, "extensions") {
                extensionsDepth = 1
            } else if Self.equals(local, "trkpt") {
                var p = GPXParser.Point()
                var k = 0
                while let key = attributes?[k], let value = attributes?[k + 1] {
                    let attribute = Self.localName(key)
                    if Self.equals(attribute, "lat") { p.lat = Self.double(value) }
                    if Self.equals(attribute, "lon") { p.lon = Self.double(value) }
                    k += 2
                }
                point = p
            } else if point != nil {
                field = if Self.equals(local, "time") { .time }
                    else if Self.equals(local, "hdop") { .hdop }
                    else if Self.equals(local, "fix") { .fix }
                    else if Self.equals(local, "speed") { .speed }
                    else if Self.equals(local, "course") { .course }
                    else { nil }
                text.removeAll(keepingCapacity: true)
            }
        }

        func text(_ bytes: UnsafePointer<CChar>?, _ length: Int32) {
            guard field != nil, extensionsDepth == 0, let bytes else { return }
            bytes.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                text.append(contentsOf: UnsafeBufferPointer(start: $0, count: Int(length)))
            }
        }

        func end(_ name: UnsafePointer<CChar>?) {
            let local = Self.localName(name)
            if extensionsDepth > 0 {
                if Self.equals(local, "extensions") { extensionsDepth -= 1 }
                return
            }
            if let field, point != nil {
                let value = Self.trimmed(text)
                switch field {
                case .time: point?.time = value
                case .hdop: point?.hdop = Double(value).flatMap { $0.isFinite ? $0 : nil }
                case .fix:
                    point?.differential = value == "dgps"
                    point?.noFix = value == "none"
                case .speed: point?.speed = Double(value).flatMap { $0.isFinite ? $0 : nil }
                case .course: point?.course = Double(value).flatMap { $0.isFinite ? $0 : nil }
                }
                self.field = nil
            }
            if Self.equals(local, "trkpt"), let p = point {
                point = nil
                GPXParser.finish(p, into: &fixes, skipped: &skipped)
            }
        }

        /// The part of an expanded name after the namespace URI.
        static func localName(_ name: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
            guard let name else { return nil }
            var local = name
            var p = name
            while p.pointee != 0 {
                if p.pointee == 0x3A { local = p + 1 }
                p += 1
            }
            return local
        }

        /// `name` is `word`, ASCII letters in any case.
        static func equals(_ name: UnsafePointer<CChar>?, _ word: StaticString) -> Bool {
            guard let name else { return false }
            let w = word.utf8Start
            let n = word.utf8CodeUnitCount
            for k in 0..<n {
                let c = UInt8(bitPattern: name[k])
                let lower = c >= 65 && c <= 90 ? c + 32 : c
                if lower != w[k] { return false }
            }
            return name[n] == 0
        }

        static func double(_ text: UnsafePointer<CChar>) -> Double? {
            Double(trimmed(Array(UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))))).flatMap { $0.isFinite ? $0 : nil }
        }

        static func trimmed(_ bytes: [UInt8]) -> String {
            var s = 0, e = bytes.count
            while s < e, bytes[s] == 32 || bytes[s] == 9 || bytes[s] == 10 || bytes[s] == 13 { s += 1 }
            while e > s, bytes[e - 1] == 32 || bytes[e - 1] == 9 || bytes[e - 1] == 10 || bytes[e - 1] == 13 { e -= 1 }
            return String(decoding: bytes[s..<e], as: UTF8.self)
        }
    }
}
