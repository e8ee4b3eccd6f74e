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

    /// Reads a mapped file, handing each fence to `sink` and dropping the pages read. A file
    /// rewritten in place meanwhile (`MappedFile.changedWhileRead`) gives one error instead
    /// of what its mixed or cut-off bytes said: the caller uses none of it.
    public static func read(_ mapped: MappedFile, file: String, options: Options, sink: (Fence, FenceShape) -> Void) -> Read {
        var read = mapped.withBytes { buffer in
            withoutActuallyEscaping(sink) { sink in
                run(buffer, file: file, options: options, sink: sink, progress: { mapped.release(before: $0) })
            }
        }
        if mapped.changedWhileRead {
            var changed = Diagnostic.error("the file changed while it was read (it was rewritten in place); "
                + "to replace a fence file safely, write the new version to another file and rename it over this one", at: nil)
            changed.file = file
            read.diagnostics = [changed]
        }
        return read
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
