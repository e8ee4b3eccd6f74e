import GeomonFormat
public import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// Fences read from an RFC 7946 FeatureCollection of Polygons and MultiPolygons.
///
/// A byte-level reader: the file is read into one byte array, numbers are parsed in place
/// (no `String`s, no `JSONSerialization`), and every problem is reported at its
/// `file:line:column` inside the GeoJSON. Bad features are skipped and reported; good ones
/// are returned. A JSON syntax error stops the read.
public enum GeoJSONFences {
    /// How a file's features become fences.
    public struct Options: Sendable {
        /// Take fence ids from `properties[idProperty]` (falling back to `feature.id`).
        public var idProperty: String?
        /// Take fence names from `properties[nameProperty]` (a string or a number), whatever the
        /// id comes from.
        public var nameProperty = "name"
        /// How the messages spell the setting that names the id property: the profile's key
        /// (`id_property: NAME`) or a command's option (`--id-property NAME`).
        public var idPropertySpelling: @Sendable (String) -> String = { "id_property: \($0)" }
        /// Check polygon rings (false: trusted, very large files).
        public var checkPolygons = true
        /// Ring defects are errors, not warnings (`validate --strict`, `strict: true`).
        public var strict = false
        /// LineString features: the corridor width in metres, or per feature from `widthProperty`.
        public var width: Double?
        public var widthProperty: String?
        /// Point features: the circle radius in metres, or per feature from `radiusProperty`.
        public var radius: Double?
        public var radiusProperty: String?

        public init(idProperty: String? = nil, checkPolygons: Bool = true, strict: Bool = false) {
            self.idProperty = idProperty
            self.checkPolygons = checkPolygons
            self.strict = strict
        }
    }

    /// Reads `path`; fence ids come from `feature.id` or, when given, `properties[idProperty]`.
    /// Problems are returned as diagnostics; fences that could be read are returned too.
    public static func load(path: String, idProperty: String? = nil) -> (fences: [Fence], diagnostics: [Diagnostic]) {
        load(path: path, options: Options(idProperty: idProperty))
    }

    /// Like `load(path:idProperty:)`; `checkPolygons: false` skips the polygon validity rules
    /// (self-intersection etc.) for trusted, very large files.
    public static func load(path: String, idProperty: String?, checkPolygons: Bool) -> (fences: [Fence], diagnostics: [Diagnostic]) {
        load(path: path, options: Options(idProperty: idProperty, checkPolygons: checkPolygons))
    }

    public static func load(path: String, options: Options) -> (fences: [Fence], diagnostics: [Diagnostic]) {
        switch FileBytes.read(path) {
        case .failure(let message):
            return ([], [.error("cannot read GeoJSON file '\(path)': \(message)", at: nil)])
        case .success(let bytes):
            let read = read(bytes, file: path, options: options)
            return (read.fences, read.diagnostics)
        }
    }

    /// Parses GeoJSON text already in memory; `file` names it in diagnostics.
    public static func parse(_ bytes: [UInt8], file: String, idProperty: String? = nil, checkPolygons: Bool = true) -> (fences: [Fence], diagnostics: [Diagnostic]) {
        let read = read(bytes, file: file, options: Options(idProperty: idProperty, checkPolygons: checkPolygons))
        return (read.fences, read.diagnostics)
    }

    /// What a read found: the fences, the problems, and what the profile's checks of its
    /// entry need (which property names the features have, how many had `idProperty`).
    public struct Read: Sendable {
        public var fences: [Fence]
        public var diagnostics: [Diagnostic]
        /// Every property name of every feature, in first-seen order.
        public var propertyNames: [String]
        /// Features whose properties held `idProperty`.
        public var featuresWithIDProperty: Int
        /// Ids of the fences used despite ring defects (by the even-odd rule), in file order.
        public var repaired: [String]
        /// Fences read (also those handed to a sink instead of `fences`).
        public var fenceCount: Int
    }

    public static func read(_ bytes: [UInt8], file: String, idProperty: String?, checkPolygons: Bool = true) -> Read {
        read(bytes, file: file, options: Options(idProperty: idProperty, checkPolygons: checkPolygons))
    }

    /// Reads a file held in memory; the fences are collected in `fences`.
    public static func read(_ bytes: [UInt8], file: String, options: Options) -> Read {
        bytes.withUnsafeBufferPointer { run($0, file: file, options: options, sink: nil) }
    }

    /// Reads a file, handing each fence to `sink` as it is read, with its shape apart (the
    /// fence's own `shape` nil); `fences` stays empty. A caller building an index keeps no
    /// copy of the file's geometry.
    public static func read(_ buffer: UnsafeBufferPointer<UInt8>, file: String, options: Options, sink: (Fence, FenceShape) -> Void) -> Read {
        withoutActuallyEscaping(sink) { sink in run(buffer, file: file, options: options, sink: sink) }
    }

    public static func read(_ bytes: [UInt8], file: String, options: Options, sink: (Fence, FenceShape) -> Void) -> Read {
        bytes.withUnsafeBufferPointer { read($0, file: file, options: options, sink: sink) }
    }

    /// Reads a mapped file, handing each fence to `sink` and dropping the pages read.
    public static func read(_ mapped: MappedFile, file: String, options: Options, sink: (Fence, FenceShape) -> Void) -> Read {
        mapped.withBytes { buffer in
            withoutActuallyEscaping(sink) { sink in
                run(buffer, file: file, options: options, sink: sink, progress: { mapped.release(before: $0) })
            }
        }
    }

    private static func run(_ buffer: UnsafeBufferPointer<UInt8>, file: String, options: Options, sink: ((Fence, FenceShape) -> Void)?,
                            progress: ((Int) -> Void)? = nil) -> Read {
        let reader = GeoJSONReader(buffer, file: file, options: options)
        reader.sink = sink
        reader.progress = progress
        reader.run()
        reader.sink = nil
        return Read(fences: reader.fences, diagnostics: reader.diagnostics, propertyNames: reader.propertyNames,
                    featuresWithIDProperty: reader.featuresWithIDProperty, repaired: reader.repaired, fenceCount: reader.fenceCount)
    }
}

/// How far to grow a collection that a file read front to back fills, one item per feature,
/// say: to what the file likely holds (the items so far, scaled by the bytes read, with 10 %
/// to spare), at least twice and at most four times its room. It is copied fewer times than
/// at every doubling (each copy also touches fresh pages), and a file whose later part holds
/// more per byte reserves at most four times what it has used.
public enum StreamGrowth {
    /// The capacity to reserve when `count` items fill `capacity` after `read` of `total` bytes.
    public static func room(count: Int, capacity: Int, read: Int, total: Int) -> Int {
        let room = max(capacity, 8)
        var wanted = 2 * room
        if count >= 256, read > 0 {
            let expected = Double(count) * Double(total) / Double(read) * 1.1
            wanted = max(wanted, Int(min(expected, Double(4 * room))))
        }
        return wanted
    }
}

/// A file mapped read-only, read once from start to end: the pages behind the reader are
/// dropped as it goes (`release(before:)`), so a file of any size costs a window of its pages,
/// not its size. Dropped pages come back from the page cache if they are read again (error
/// positions), so nothing is lost, only re-read.
public final class MappedFile {
    public let size: Int
    private let base: UnsafeMutableRawPointer?
    private var released = 0
    /// Pages kept behind the reader (re-reads of a feature's own bytes stay in memory).
    static let window = 4 << 20

    /// Maps `path`; the reason on failure.
    public static func open(_ path: String) -> Result<MappedFile, MappedFile.Failure> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(Failure(reason: String(cString: strerror(errno)))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(Failure(reason: String(cString: strerror(errno)))) }
        if info.st_mode & S_IFMT == S_IFDIR { return .failure(Failure(reason: "is a directory")) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            // A pipe or device: read it whole.
            switch FileBytes.read(path) {
            case .success(let bytes): return .success(MappedFile(copying: bytes))
            case .failure(let reason): return .failure(Failure(reason: reason))
            }
        }
        let size = Int(info.st_size)
        guard size > 0 else { return .success(MappedFile(copying: [])) }
        guard let pointer = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), pointer != MAP_FAILED else {
            return .failure(Failure(reason: String(cString: strerror(errno))))
        }
        _ = madvise(pointer, size, MADV_SEQUENTIAL)
        return .success(MappedFile(base: pointer, size: size))
    }

    public struct Failure: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    private let copy: [UInt8]?

    private init(base: UnsafeMutableRawPointer, size: Int) {
        self.base = base
        self.size = size
        copy = nil
    }

    private init(copying bytes: [UInt8]) {
        base = nil
        size = bytes.count
        copy = bytes
    }

    deinit {
        if let base { munmap(base, size) }
    }

    /// The bytes, valid during `body`.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let copy { return try copy.withUnsafeBufferPointer(body) }
        return try body(UnsafeBufferPointer(start: base?.assumingMemoryBound(to: UInt8.self), count: size))
    }

    /// How far the reader has come: the last offset given to `release(before:)`.
    public private(set) var position = 0

    /// Gives the pages more than `window` before `offset` back to the kernel.
    public func release(before offset: Int) {
        position = offset
        guard let base else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = (offset - Self.window) / page * page
        guard end - released >= Self.window else { return }
        _ = madvise(base + released, end - released, MADV_DONTNEED)
        released = end
    }
}

/// Reading a whole file into memory with plain POSIX calls.
enum FileBytes {
    enum Outcome {
        case success([UInt8])
        case failure(String)
    }

    static func read(_ path: String, limit: Int = Int.max) -> Outcome {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(String(cString: strerror(errno))) }
        if info.st_mode & S_IFMT == S_IFDIR { return .failure("is a directory") }
        let size = Int(info.st_size)
        if size > limit { return .failure("file is larger than \(limit) bytes") }
        var failure: String?
        // Read straight into uninitialized storage (no memset of a possibly huge buffer).
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var filled = 0
            while filled < size, let base = buffer.baseAddress {
                let got = Glibc.read(fd, base + filled, size - filled)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    break
                }
                if got == 0 { break }
                filled += got
            }
            initialized = filled
        }
        if let failure { return .failure(failure) }
        // Files that grew (or /proc-like files with size 0) are read to the end.
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { break }
            bytes.append(contentsOf: chunk[0..<got])
            if bytes.count > limit { return .failure("file is larger than \(limit) bytes") }
        }
        return .success(bytes)
    }
}

/// A JSON syntax error at a byte offset.
struct JSONSyntaxError: Error {
    var offset: Int
    var message: String
}

/// The single-pass reader behind `GeoJSONFences`.
final class GeoJSONReader {
    private let p: UnsafeBufferPointer<UInt8>
    private let n: Int
    private var i = 0
    private let file: String
    private let options: GeoJSONFences.Options
    /// The properties that give a corridor's width or a circle's radius (`options`).
    private let sizeProperties: Set<String>
    private var idProperty: String? { options.idProperty }
    private var checkPolygons: Bool { options.checkPolygons }
    private var lineStarts: [Int]?
    private var firstIDOffset: [String: (offset: Int, index: Int)] = [:]
    private let maxDiagnostics = 200
    private var stopped = false
    private var scratch = PositionBuffer()
    /// Shared by all fences (one set storage instead of one per fence).
    private let defaultEvents: Set<EventKind> = [.enter, .exit]
    /// The last position resolved by `location(_:)`, for the incremental (forward) case.
    private var lastLocated = (offset: 0, line: 1, lineStart: 0)
    /// 0-based index of the feature being read (messages name it as `features[i]`).
    private var featureIndex = 0
    /// Coordinates out of range in the feature being read: the first is reported, the rest counted.
    private var rangeProblems: (first: JSONCursor.Problem?, count: Int, latitude: Bool) = (nil, 0, false)
    /// Whether the `[longitude, latitude]` hint was given (once per file).
    private var orderHintGiven = false
    /// Features without an id: the first (where, which, its name), how many, and the property
    /// names every one of them has (one error for the file names them).
    private var missingIDs: (first: (offset: Int, index: Int, name: String?)?, count: Int, keysInAll: [String]) = (nil, 0, [])

    var fences: [Fence] = []
    var diagnostics: [Diagnostic] = []
    /// Takes each fence as it is read (instead of `fences`).
    var sink: ((Fence, FenceShape) -> Void)?
    /// Told each feature's start: the bytes before it are not needed for reading on.
    var progress: ((Int) -> Void)?
    private(set) var fenceCount = 0
    /// Property names over all features, first-seen order.
    private(set) var propertyNames: [String] = []
    private var propertyNameSet: Set<String> = []
    private(set) var featuresWithIDProperty = 0
    private(set) var repaired: [String] = []
    /// The feature being read has a ring defect the even-odd rule reads through.
    private var featureRepaired = false
    /// Cosmetic defects over the file (one warning at the end): rings wound against RFC 7946,
    /// and repeated consecutive positions; where the first of each was.
    private var windingCount = 0, windingFirst: (location: SourceLocation, feature: Int)?
    private var duplicateCount = 0, duplicateFirst: (location: SourceLocation, feature: Int)?

    init(_ buffer: UnsafeBufferPointer<UInt8>, file: String, options: GeoJSONFences.Options) {
        p = buffer
        n = buffer.count
        self.file = file
        self.options = options
        sizeProperties = Set([options.widthProperty, options.radiusProperty].compactMap { $0 })
    }

    // MARK: - Positions and diagnostics

    func location(_ offset: Int) -> SourceLocation {
        if offset >= lastLocated.offset && offset <= n {
            // Forward from the last answer: count newlines in between (one pass overall).
            var line = lastLocated.line
            var lineStart = lastLocated.lineStart
            if let base = p.baseAddress {
                var k = lastLocated.offset
                while k < offset, let hit = memchr(base + k, 0x0A, offset - k) {
                    let newline = UnsafeRawPointer(hit).assumingMemoryBound(to: UInt8.self) - base
                    line += 1
                    lineStart = newline + 1
                    k = newline + 1
                }
            }
            lastLocated = (offset, line, lineStart)
            return SourceLocation(file: file, line: line, column: column(from: lineStart, to: offset))
        }
        if lineStarts == nil {
            var starts = [0]
            for k in 0..<n where p[k] == 0x0A { starts.append(k + 1) }
            lineStarts = starts
        }
        let starts = lineStarts ?? [0]
        var lo = 0, hi = starts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if starts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        return SourceLocation(file: file, line: lo + 1, column: column(from: starts[lo], to: offset))
    }

    private func column(from lineStart: Int, to offset: Int) -> Int {
        TextPositions.column(in: p, lineStart: lineStart, offset: offset)
    }

    /// A ring defect: a warning (the fence is used by the even-odd rule), or an error in
    /// strict mode. Returns true when the feature stays usable.
    private func defect(_ message: String, at offset: Int) -> Bool {
        if options.strict {
            report(message + " (an error in strict mode)", at: offset)
            return false
        }
        guard !stopped else { return true }
        var warning = Diagnostic.warning(message + "; used by the even-odd rule", at: location(offset))
        warning.topic = .ringDefect
        diagnostics.append(warning)
        featureRepaired = true
        return true
    }

    private func report(_ message: String, at offset: Int) {
        guard !stopped else { return }
        if diagnostics.count >= maxDiagnostics {
            diagnostics.append(.error("too many errors in this file; stopping", at: location(offset)))
            stopped = true
            return
        }
        diagnostics.append(.error(message, at: location(offset)))
    }

    // MARK: - Driver

    func run() {
        do {
            if n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF { i = 3 }
            try skipSpace()
            guard i < n else {
                report("GeoJSON file is empty", at: 0)
                return
            }
            try parseRoot()
            reportCosmetics()
            try skipSpace()
            if i < n { throw JSONSyntaxError(offset: i, message: "unexpected text after the end of the JSON value") }
        } catch let error as JSONSyntaxError {
            stopped = false
            report("invalid JSON: \(error.message)", at: error.offset)
        } catch {
            report("invalid JSON", at: i)
        }
    }

    private func parseRoot() throws {
        let start = i
        guard peek() == UInt8(ascii: "{") else {
            throw JSONSyntaxError(offset: i, message: "a GeoJSON file must be an object (a FeatureCollection)")
        }
        var type: String?
        var typeOffset = start
        var sawFeatures = false
        try parseObject { key, offset in
            switch key {
            case "type":
                typeOffset = self.i
                type = try self.parseStringValue()
            case "features":
                sawFeatures = true
                try self.parseFeatures()
            default:
                try self.skipValue(depth: 1)
            }
            _ = offset
        }
        reportMissingIDs()
        if let type, type != "FeatureCollection" {
            report("GeoJSON root must be a FeatureCollection (got '\(type)')", at: typeOffset)
        } else if type == nil {
            report("GeoJSON root has no \"type\": \"FeatureCollection\"", at: start)
        } else if !sawFeatures {
            report("GeoJSON FeatureCollection has no 'features' array", at: start)
        }
    }

    private func parseFeatures() throws {
        guard peek() == UInt8(ascii: "[") else {
            let at = i
            try skipValue(depth: 1)
            report("'features' must be an array", at: at)
            return
        }
        try parseArray { index in
            if self.stopped {
                try self.skipValue(depth: 2)
            } else {
                self.featureIndex = index
                self.progress?(self.i)
                try self.parseFeature()
            }
        }
    }

    private func parseFeature() throws {
        let start = i
        let firstDiagnostic = diagnostics.count
        rangeProblems = (nil, 0, false)
        featureRepaired = false
        // Located first: positions are found walking forward through the file (a later one
        // first would send this one back through the whole file).
        let startLocation = location(start)
        guard peek() == UInt8(ascii: "{") else {
            try skipValue(depth: 2)
            report("features[\(featureIndex)]: a feature must be an object", at: start)
            return
        }
        var propertyKeys: [String] = []
        var typeOK = false
        var typeSeen = false
        var id: String?
        var idBad = false
        var propertyID: String?
        var propertyIDBad = false
        var name: String?
        var geometry: ParsedGeometry?
        var geometryOffset = start
        var geometrySeen = false
        var geometryBad = false
        // Per-feature corridor width and circle radius (metres), when the options name them.
        var sizes: [String: (value: Double?, offset: Int)] = [:]
        let sizeProperties = self.sizeProperties
        let idProperty = self.idProperty
        let nameProperty = options.nameProperty
        try parseObject { key, _ in
            switch key {
            case "type":
                typeSeen = true
                let offset = self.i
                let value = try self.parseStringValue()
                typeOK = value == "Feature"
                if !typeOK { self.report("feature type must be 'Feature' (got '\(value ?? "non-string")')", at: offset) }
            case "id":
                let offset = self.i
                if let value = try self.parseIDValue() {
                    id = value
                } else {
                    idBad = true
                    self.report("feature 'id' must be a string or a number", at: offset)
                }
            case "properties":
                if self.peek() == UInt8(ascii: "{") {
                    try self.parseObject { pkey, _ in
                        propertyKeys.append(pkey)
                        if self.propertyNameSet.insert(pkey).inserted { self.propertyNames.append(pkey) }
                        if let idProperty, pkey == idProperty {
                            self.featuresWithIDProperty += 1
                            let offset = self.i
                            if let value = try self.parseIDValue() {
                                propertyID = value
                                if pkey == nameProperty { name = value }
                            } else {
                                propertyIDBad = true
                                self.report("property '\(idProperty)' must be a string or a number", at: offset)
                            }
                        } else if pkey == nameProperty {
                            // A string or a number; anything else (null) is no name.
                            name = try self.parseIDValue()
                        } else if sizeProperties.contains(pkey) {
                            let offset = self.i
                            sizes[pkey] = (try self.parseNumberValue(), offset)
                        } else {
                            try self.skipValue(depth: 4)
                        }
                    }
                } else {
                    try self.skipValue(depth: 3)
                }
            case "geometry":
                geometrySeen = true
                geometryOffset = self.i
                if let parsed = try self.parseGeometry() {
                    geometry = parsed
                } else {
                    geometryBad = true
                }
            default:
                try self.skipValue(depth: 3)
            }
        }
        if !typeSeen { report("no \"type\": \"Feature\"", at: start) }
        if !geometrySeen { report("no 'geometry'", at: start) }
        reportRangeProblems()
        var fenceID = propertyID ?? id
        if propertyID == nil && !propertyIDBad && id == nil && !idBad {
            // Reported once for the file, after the last feature (`reportMissingIDs`).
            if missingIDs.first == nil { missingIDs.first = (start, featureIndex, name) }
            missingIDs.count += 1
            missingIDs.keysInAll = missingIDs.count == 1 ? propertyKeys : missingIDs.keysInAll.filter(propertyKeys.contains)
        }
        if let candidate = fenceID {
            if let problem = FenceIDRule.problem(candidate) {
                report("the id \(problem)", at: start)
                fenceID = nil
            } else {
                if firstIDOffset.count == firstIDOffset.capacity { reserveIDs() }
                // One probe for the usual case, a new id; a repeated one is put back.
                if let first = firstIDOffset.updateValue((start, featureIndex), forKey: candidate) {
                    firstIDOffset[candidate] = first
                    let at = location(first.offset)
                    report("duplicate feature id '\(candidate)' (first: features[\(first.index)] at line \(at.line), column \(at.column))", at: start)
                    fenceID = nil
                }
            }
        }
        var shape: FenceShape?
        if typeOK, !geometryBad, let geometry {
            shape = self.shape(geometry, sizes: sizes, at: geometryOffset)
        }
        if let candidate = shape, fenceID != nil, checkPolygons {
            let limits = geometryLimitProblems(candidate)
            for problem in limits { report(problem.text, at: start) }
            if !limits.isEmpty { shape = nil }
        }
        nameFeature(from: firstDiagnostic, id: propertyID ?? id, name: name)
        guard let fenceID, let shape else { return }
        if featureRepaired { repaired.append(fenceID) }
        fenceCount += 1
        if let sink {
            var fence = Fence(id: fenceID, name: name, shape: nil, events: defaultEvents)
            fence.location = startLocation
            sink(fence, shape)
        } else {
            var fence = Fence(id: fenceID, name: name, shape: shape, events: defaultEvents)
            fence.location = startLocation
            fences.append(fence)
        }
    }

    /// A parsed geometry, before the properties that size it are known.
    enum ParsedGeometry {
        case polygons([PolygonRings])
        case lines([[Coordinate]])
        case point(Coordinate)
    }

    /// Makes room in `firstIDOffset` for the ids the rest of the file likely holds.
    private func reserveIDs() {
        firstIDOffset.reserveCapacity(StreamGrowth.room(count: featureIndex, capacity: firstIDOffset.capacity, read: i, total: n))
    }

    /// The fence shape of a geometry: lines need a width, a point a radius (the feature's
    /// property, else the entry's default).
    private func shape(_ geometry: ParsedGeometry, sizes: [String: (value: Double?, offset: Int)], at offset: Int) -> FenceShape? {
        func size(property: String?, fallback: Double?, what: String, key: String, propertyKey: String) -> Double? {
            if let property, let given = sizes[property] {
                guard let value = given.value, value.isFinite, value > 0 else {
                    report("property '\(property)' must be a positive number of metres (the \(what))", at: given.offset)
                    return nil
                }
                return value
            }
            if let fallback { return fallback }
            let hint = property.map { "this feature has no '\($0)' property and the entry no '\(key)'" }
                ?? "set '\(key)' on the fence entry, or '\(propertyKey)' to read it from each feature"
            report("a \(what == "corridor width" ? "line" : "point") is a fence only with a \(what): \(hint)", at: offset)
            return nil
        }
        switch geometry {
        case let .polygons(polygons):
            return .polygons(polygons)
        case let .lines(lines):
            guard let width = size(property: options.widthProperty, fallback: options.width, what: "corridor width", key: "width", propertyKey: "width_property") else { return nil }
            return .corridor(lines: lines, widthMeters: width)
        case let .point(center):
            guard let radius = size(property: options.radiusProperty, fallback: options.radius, what: "circle radius", key: "radius", propertyKey: "radius_property") else { return nil }
            guard radius <= geometryMaxCircleRadiusMeters else {
                report("a circle radius of \(NumberText.short(radius, 1)) m is over the supported 1000 km", at: offset)
                return nil
            }
            return .circle(center: center, radiusMeters: radius)
        }
    }

    /// One error for every feature without an id, at the first of them: how many, which
    /// properties they all have, and the id property to name (an id-like property they all
    /// have, or one near the named property's spelling).
    private func reportMissingIDs() {
        guard let first = missingIDs.first else { return }
        let count = missingIDs.count
        let which = count == 1 ? "features[\(first.index)]" + (first.name.map { " (name '\($0.clipped)')" } ?? "") + " has"
            : "\(count) features (the first: features[\(first.index)]" + (first.name.map { ", name '\($0.clipped)'" } ?? "") + ") have"
        var message = which + (idProperty.map { " no id (no 'id' member and no '\($0)' property)" } ?? " no 'id'")
        let keys = missingIDs.keysInAll
        if !keys.isEmpty {
            message += "; " + (count == 1 ? "its" : "all have the") + " properties " + keys.prefix(8).map { "'\($0)'" }.joined(separator: ", ") + (keys.count > 8 ? ", …" : "")
        }
        let spell = options.idPropertySpelling
        if let idProperty, let suggestion = EditDistance.suggestion(for: idProperty, among: keys) {
            message += "; did you mean '\(spell(suggestion))'?"
        } else if idProperty == nil, let likely = Self.idLikeProperties.first(where: keys.contains) {
            message += "; name the property that identifies each feature, e.g. '\(spell(likely))'"
        } else if idProperty == nil {
            message += "; give each feature an 'id', or name the property that identifies it with '\(spell("PROPERTY"))'"
        }
        report(message, at: first.offset)
    }

    /// Property names that usually identify a feature, most specific first.
    static let idLikeProperties = ["id", "ID", "Id", "fid", "FID", "osm_id", "@id", "code", "CODE", "ref", "name", "NAME", "Name", "nazev", "NAZEV"]

    /// Prefixes the diagnostics of the feature just read with which feature it is:
    /// `features[3] (id 'ams-12', name 'Vondelpark'): …`.
    private func nameFeature(from first: Int, id: String?, name: String?) {
        guard first < diagnostics.count else { return }
        var parts: [String] = []
        if let id, !id.isEmpty { parts.append("id '\(id.clipped)'") }
        if let name, !name.isEmpty { parts.append("name '\(name.clipped)'") }
        let prefix = "features[\(featureIndex)]" + (parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")") + ": "
        for k in first..<diagnostics.count where !diagnostics[k].message.hasPrefix("too many errors") {
            diagnostics[k].message = prefix + diagnostics[k].message
        }
    }

    /// One diagnostic for the feature's coordinates out of range: the first, how many more,
    /// and (once per file, for latitudes) that GeoJSON positions are `[longitude, latitude]`.
    private func reportRangeProblems() {
        guard let first = rangeProblems.first else { return }
        var message = first.message
        if rangeProblems.count > 1 { message += " (and \(rangeProblems.count - 1) more \(rangeProblems.count == 2 ? "position" : "positions") out of range in this feature)" }
        if rangeProblems.latitude && !orderHintGiven {
            message += "; GeoJSON positions are [longitude, latitude]: are these written [latitude, longitude]?"
            orderHintGiven = true
        }
        report(message, at: first.offset)
    }

    /// The geometry types a fence can be made of.
    static let fenceGeometryTypes = ["Polygon", "MultiPolygon", "LineString", "MultiLineString", "Point"]

    /// A geometry object → its parsed coordinates, or nil after reporting why not.
    private func parseGeometry() throws -> ParsedGeometry? {
        let start = i
        if peekLiteral("null") {
            try skipValue(depth: 3)
            report("feature geometry is null; a fence needs a Polygon, MultiPolygon, LineString, MultiLineString or Point", at: start)
            return nil
        }
        guard peek() == UInt8(ascii: "{") else {
            try skipValue(depth: 3)
            report("feature 'geometry' must be an object", at: start)
            return nil
        }
        var type: String?
        var typeOffset = start
        var coordinatesOffset: Int?
        var parsed: ParsedGeometry??
        try parseObject { key, _ in
            switch key {
            case "type":
                typeOffset = self.i
                type = try self.parseStringValue()
            case "coordinates":
                coordinatesOffset = self.i
                if let type, Self.fenceGeometryTypes.contains(type) {
                    // The usual order: read the coordinates right away.
                    parsed = .some(try self.parseCoordinates(type: type))
                } else {
                    // Type not known yet: come back once it is.
                    try self.skipValue(depth: 4)
                }
            default:
                try self.skipValue(depth: 4)
            }
        }
        let end = i
        guard let type else {
            report("geometry has no 'type'", at: start)
            return nil
        }
        guard Self.fenceGeometryTypes.contains(type) else {
            report("geometry type '\(type)' is not supported; fences are Polygon, MultiPolygon, LineString or MultiLineString (corridors, with a width) or Point (a circle, with a radius)", at: typeOffset)
            return nil
        }
        guard let coordinatesOffset else {
            report("\(type) has no 'coordinates'", at: start)
            return nil
        }
        if let parsed { return parsed }
        i = coordinatesOffset
        defer { i = end }
        return try parseCoordinates(type: type)
    }

    /// The coordinates of a geometry of `type` at `i`; nil after reporting problems.
    private func parseCoordinates(type: String) throws -> ParsedGeometry? {
        switch type {
        case "Polygon", "MultiPolygon":
            return try parseCoordinates(multi: type == "MultiPolygon").map(ParsedGeometry.polygons)
        case "Point":
            var cursor = JSONCursor(p, at: i)
            guard peek() == UInt8(ascii: "[") else {
                try skipValue(depth: 5)
                report("Point coordinates must be a position [longitude, latitude]", at: cursor.j)
                return nil
            }
            var problems: [JSONCursor.Problem] = []
            let point = try cursor.position(&problems)
            i = cursor.j
            routeProblems(problems)
            return point.map(ParsedGeometry.point)
        default:
            let start = i
            var lines: [[Coordinate]] = []
            var bad = false
            func line() throws {
                let offset = self.i
                guard try self.expectArray("a line must be an array of positions") else { bad = true; return }
                var cursor = JSONCursor(self.p, at: self.i)
                var problems: [JSONCursor.Problem] = []
                let (points, _) = try cursor.ring(&problems, scratch: &self.scratch)
                self.i = cursor.j
                self.routeProblems(problems)
                guard let points else { bad = true; return }
                if Set(points).count < 2 {
                    self.report("a line needs at least 2 distinct positions (got \(Set(points).count))", at: offset)
                    bad = true
                    return
                }
                lines.append(points)
            }
            if type == "LineString" {
                try line()
            } else {
                guard try expectArray("MultiLineString coordinates must be an array of lines") else { return nil }
                try parseArray { _ in try line() }
                if lines.isEmpty && !bad {
                    report("MultiLineString has no lines", at: start)
                    bad = true
                }
            }
            return bad ? nil : .lines(lines)
        }
    }

    /// The coordinates of a Polygon or MultiPolygon at `i`; nil after reporting problems.
    private func parseCoordinates(multi: Bool) throws -> [PolygonRings]? {
        let coordinatesOffset = i
        var bad = false
        var polygons: [PolygonRings] = []
        if !multi {
            if let polygon = try parsePolygon(&bad) { polygons.append(polygon) }
        } else {
            guard try expectArray("MultiPolygon coordinates must be an array of polygons") else { return nil }
            try parseArray { _ in
                if let polygon = try self.parsePolygon(&bad) { polygons.append(polygon) }
            }
            if polygons.isEmpty && !bad {
                report("MultiPolygon has no polygons", at: coordinatesOffset)
                bad = true
            }
        }
        return bad ? nil : polygons
    }

    private func expectArray(_ message: String) throws -> Bool {
        if peek() == UInt8(ascii: "[") { return true }
        let at = i
        try skipValue(depth: 5)
        report(message, at: at)
        return false
    }

    private func parsePolygon(_ bad: inout Bool) throws -> PolygonRings? {
        let start = i
        guard try expectArray("polygon coordinates must be an array of rings") else { bad = true; return nil }
        var rings: [[Coordinate]] = []
        var ringOffsets: [Int] = []
        var failed = false
        try parseArray { _ in
            let offset = self.i
            if let ring = try self.parseRing() {
                rings.append(ring)
                ringOffsets.append(offset)
            } else {
                failed = true
            }
        }
        if failed { bad = true; return nil }
        guard let shell = rings.first else {
            report("polygon has no rings", at: start)
            bad = true
            return nil
        }
        let polygon = PolygonRings(shell: shell, holes: Array(rings.dropFirst()))
        if checkPolygons {
            // A ring without area is unusable; crossings and misplaced holes are defects the
            // even-odd rule reads through (errors only in strict mode).
            let surveys = rings.map(PolygonValidity.survey(ofRing:))
            for problem in PolygonValidity.problems(of: polygon, surveys: surveys) {
                switch problem {
                case .shell(let ringProblem):
                    if !reportRing(ringProblem, ringOffset: ringOffsets[0], what: "polygon") { bad = true }
                case .hole(let h, let ringProblem):
                    if !reportRing(ringProblem, ringOffset: ringOffsets[h + 1], what: "hole \(h + 1)") { bad = true }
                case .holeOutsideShell(let h):
                    if !defect("hole \(h + 1) is not inside the polygon's outer ring (or crosses it)", at: ringOffsets[h + 1]) { bad = true }
                }
            }
            for (r, survey) in surveys.enumerated() { noteCosmetics(survey, isShell: r == 0, offset: ringOffsets[r]) }
        }
        return bad ? nil : polygon
    }

    /// Reports a ring problem; true when the ring stays usable (a defect read by even-odd).
    private func reportRing(_ problem: PolygonValidity.RingProblem, ringOffset: Int, what: String) -> Bool {
        switch problem {
        case .invalidCoordinate(let index):
            report("\(what): position \(index + 1) is out of range", at: positionOffset(ringOffset, index))
            return false
        case .tooFewDistinctPoints(let count):
            report("\(what) needs at least 3 distinct positions (got \(count))", at: ringOffset)
            return false
        case .zeroArea:
            report("\(what) has zero area (all positions on one line)", at: ringOffset)
            return false
        case .selfIntersection(let a, let b):
            return defect("\(what) edges cross or touch: positions \(a.from + 1)–\(a.to + 1) and \(b.from + 1)–\(b.to + 1)", at: positionOffset(ringOffset, b.from))
        }
    }

    /// Counts what RFC 7946 asks of a ring but no answer depends on: the winding (outer rings
    /// counterclockwise, holes clockwise) and repeated consecutive positions.
    private func noteCosmetics(_ survey: PolygonValidity.RingSurvey, isShell: Bool, offset: Int) {
        let twiceArea = survey.twiceSignedArea
        if twiceArea != 0, (twiceArea > 0) != isShell {
            windingCount += 1
            // The position now, while the reader is there (no walk back through the file later).
            if windingFirst == nil { windingFirst = (location(offset), featureIndex) }
        }
        if survey.repeatsPosition {
            duplicateCount += 1
            if duplicateFirst == nil { duplicateFirst = (location(offset), featureIndex) }
        }
    }

    /// The file's cosmetic defects, one warning each (errors in strict mode).
    private func reportCosmetics() {
        if let first = windingFirst {
            let which = windingCount == 1 ? "a ring in features[\(first.feature)] is" : "\(windingCount) rings are (the first in features[\(first.feature)])"
            _ = fileDefect("\(which) wound against RFC 7946 (outer rings counterclockwise, holes clockwise); the even-odd rule does not depend on the winding", at: first.location)
        }
        if let first = duplicateFirst {
            let which = duplicateCount == 1 ? "a ring in features[\(first.feature)] repeats" : "\(duplicateCount) rings (the first in features[\(first.feature)]) repeat"
            _ = fileDefect("\(which) a position twice in a row; the repeats are ignored", at: first.location)
        }
    }

    private func fileDefect(_ message: String, at location: SourceLocation) -> Bool {
        if options.strict {
            diagnostics.append(.error(message + " (an error in strict mode)", at: location))
            return false
        }
        var warning = Diagnostic.warning(message, at: location)
        warning.topic = .ringDefect
        diagnostics.append(warning)
        return true
    }

    /// Byte offset of the `index`-th position of the ring starting at `ringOffset`.
    private func positionOffset(_ ringOffset: Int, _ index: Int) -> Int {
        let saved = i
        defer { i = saved }
        i = ringOffset
        var result = ringOffset
        do {
            try parseArray { k in
                if k == index { result = self.i }
                try self.skipValue(depth: 8)
            }
        } catch {}
        return result
    }

    /// Problems of positions: out-of-range coordinates are collected (one message per
    /// feature), the others reported at once.
    private func routeProblems(_ problems: [JSONCursor.Problem]) {
        for problem in problems {
            switch problem.kind {
            case .latitudeRange, .longitudeRange:
                if rangeProblems.first == nil { rangeProblems.first = problem }
                rangeProblems.count += 1
                if problem.kind == .latitudeRange { rangeProblems.latitude = true }
            case .other:
                report(problem.message, at: problem.offset)
            }
        }
    }

    /// One linear ring, coordinates in range. RFC 7946 wants it closed with ≥ 4 positions; an
    /// unclosed ring is a defect (closed here), and the distinct positions are checked later.
    private func parseRing() throws -> [Coordinate]? {
        let start = i
        guard try expectArray("a polygon ring must be an array of positions") else { return nil }
        var cursor = JSONCursor(p, at: i)
        var problems: [JSONCursor.Problem] = []
        let (points, lastOffset) = try cursor.ring(&problems, scratch: &scratch)
        i = cursor.j
        routeProblems(problems)
        guard var ring = points else { return nil }
        if let first = ring.first, first != ring.last {
            guard defect("polygon ring is not closed: its last position differs from its first (closed here)", at: lastOffset) else { return nil }
            ring.append(first)
        }
        // Structure, checked even for trusted files: three positions and the closing one.
        guard ring.count >= 4 else {
            report("a polygon ring needs at least 4 positions, the last repeating the first (got \(points?.count ?? 0))", at: start)
            return nil
        }
        return ring
    }

    // MARK: - JSON primitives

    @inline(__always) private func peek() -> UInt8? { i < n ? p[i] : nil }

    private func peekLiteral(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard i + count <= n else { return false }
        let w = word.utf8Start
        for k in 0..<count where p[i + k] != w[k] { return false }
        return true
    }

    @inline(__always) private func skipSpace() throws {
        var cursor = JSONCursor(p, at: i)
        cursor.skipSpace()
        i = cursor.j
    }

    private func expect(_ byte: UInt8) throws {
        try skipSpace()
        guard i < n else { throw JSONSyntaxError(offset: i, message: "unexpected end of file, expected '\(Character(Unicode.Scalar(byte)))'") }
        guard p[i] == byte else { throw JSONSyntaxError(offset: i, message: "expected '\(Character(Unicode.Scalar(byte)))'") }
        i += 1
    }

    /// Walks an object, calling `member(key, keyOffset)` with `i` at each value.
    private func parseObject(_ member: (String, Int) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        try skipSpace()
        if peek() == UInt8(ascii: "}") { i += 1; return }
        while true {
            try skipSpace()
            let keyOffset = i
            guard peek() == UInt8(ascii: "\"") else { throw JSONSyntaxError(offset: i, message: "expected a string key") }
            let key = try parseString()
            try expect(UInt8(ascii: ":"))
            try skipSpace()
            try member(key, keyOffset)
            try skipSpace()
            guard let c = peek() else { throw JSONSyntaxError(offset: i, message: "unexpected end of file in an object") }
            i += 1
            if c == UInt8(ascii: "}") { return }
            if c != UInt8(ascii: ",") { throw JSONSyntaxError(offset: i - 1, message: "expected ',' or '}' in an object") }
        }
    }

    /// Walks an array, calling `element(index)` with `i` at each element.
    private func parseArray(_ element: (Int) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        try skipSpace()
        if peek() == UInt8(ascii: "]") { i += 1; return }
        var index = 0
        while true {
            try skipSpace()
            try element(index)
            index += 1
            try skipSpace()
            guard let c = peek() else { throw JSONSyntaxError(offset: i, message: "unexpected end of file in an array") }
            i += 1
            if c == UInt8(ascii: "]") { return }
            if c != UInt8(ascii: ",") { throw JSONSyntaxError(offset: i - 1, message: "expected ',' or ']' in an array") }
        }
    }

    /// A string value, or nil (value skipped) when the value is not a string.
    private func parseStringValue() throws -> String? {
        if peek() == UInt8(ascii: "\"") { return try parseString() }
        try skipValue(depth: 8)
        return nil
    }

    /// A number value; nil (value skipped) for anything else.
    private func parseNumberValue() throws -> Double? {
        guard let c = peek() else { throw JSONSyntaxError(offset: i, message: "unexpected end of file") }
        if c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39) { return try parseNumber() }
        try skipValue(depth: 8)
        return nil
    }

    /// A string or number value as an id string; nil (value skipped) otherwise.
    private func parseIDValue() throws -> String? {
        guard let c = peek() else { throw JSONSyntaxError(offset: i, message: "unexpected end of file") }
        if c == UInt8(ascii: "\"") { return try parseString() }
        if c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39) {
            let start = i
            _ = try parseNumber()
            return String(decoding: UnsafeBufferPointer(rebasing: p[start..<i]), as: UTF8.self)
        }
        try skipValue(depth: 8)
        return nil
    }

    private func parseString() throws -> String {
        let start = i
        i += 1
        let contentStart = i
        var simple = true
        while i < n {
            let c = p[i]
            if c == UInt8(ascii: "\"") {
                if simple {
                    let text = Self.commonWord(p, contentStart, i)
                        ?? String(decoding: UnsafeBufferPointer(rebasing: p[contentStart..<i]), as: UTF8.self)
                    i += 1
                    return text
                }
                break
            }
            if c == UInt8(ascii: "\\") { simple = false; i += 2; continue }
            if c < 0x20 { throw JSONSyntaxError(offset: i, message: "control character in a string") }
            i += 1
        }
        guard i < n else { throw JSONSyntaxError(offset: start, message: "unterminated string") }
        // Slow path with escapes.
        var scalars = String.UnicodeScalarView()
        var bytes: [UInt8] = []
        i = contentStart
        func flush() {
            if !bytes.isEmpty {
                scalars.append(contentsOf: String(decoding: bytes, as: UTF8.self).unicodeScalars)
                bytes.removeAll()
            }
        }
        while i < n {
            let c = p[i]
            if c == UInt8(ascii: "\"") { i += 1; flush(); return String(scalars) }
            if c == UInt8(ascii: "\\") {
                guard i + 1 < n else { break }
                let e = p[i + 1]
                i += 2
                switch e {
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "/"), UInt8(ascii: "\\"), UInt8(ascii: "\""): bytes.append(e)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code), i + 1 < n, p[i] == UInt8(ascii: "\\"), p[i + 1] == UInt8(ascii: "u") {
                        i += 2
                        let low = try hex4()
                        code = 0x10000 + ((code - 0xD800) << 10) + (low &- 0xDC00) & 0x3FF
                    }
                    flush()
                    scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                default:
                    throw JSONSyntaxError(offset: i - 2, message: "invalid escape in a string")
                }
                continue
            }
            bytes.append(c)
            i += 1
        }
        throw JSONSyntaxError(offset: start, message: "unterminated string")
    }

    /// The text between `start` and `end` when it is one of the words every feature repeats
    /// (keys, types): a literal, found by a comparison, where decoding the bytes into a new
    /// String costs ten times as much.
    @inline(__always) private static func commonWord(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String? {
        @inline(__always) func matches(_ word: StaticString) -> Bool {
            let w = word.utf8Start
            for k in 0..<word.utf8CodeUnitCount where p[start &+ k] != w[k] { return false }
            return true
        }
        switch end &- start {
        case 2: if matches("id") { return "id" }
        case 4:
            if matches("type") { return "type" }
            if matches("name") { return "name" }
        case 5: if matches("Point") { return "Point" }
        case 7:
            if matches("Feature") { return "Feature" }
            if matches("Polygon") { return "Polygon" }
        case 8:
            if matches("geometry") { return "geometry" }
            if matches("features") { return "features" }
        case 10:
            if matches("properties") { return "properties" }
            if matches("LineString") { return "LineString" }
        case 11: if matches("coordinates") { return "coordinates" }
        case 12: if matches("MultiPolygon") { return "MultiPolygon" }
        case 15: if matches("MultiLineString") { return "MultiLineString" }
        case 17: if matches("FeatureCollection") { return "FeatureCollection" }
        default: break
        }
        return nil
    }

    private func hex4() throws -> UInt32 {
        guard i + 4 <= n else { throw JSONSyntaxError(offset: i, message: "bad \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = p[i]
            let digit: UInt32
            switch c {
            case 0x30...0x39: digit = UInt32(c - 0x30)
            case 0x41...0x46: digit = UInt32(c - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(c - 0x61 + 10)
            default: throw JSONSyntaxError(offset: i, message: "bad \\u escape")
            }
            value = value << 4 | digit
            i += 1
        }
        return value
    }

    private func parseNumber() throws -> Double {
        var cursor = JSONCursor(p, at: i)
        defer { i = cursor.j }
        return try cursor.number()
    }

    /// Skips any JSON value (`depth` is kept for call-site readability; the cursor limits nesting).
    private func skipValue(depth: Int) throws {
        var cursor = JSONCursor(p, at: i)
        defer { i = cursor.j }
        try cursor.skipValue()
    }
}
