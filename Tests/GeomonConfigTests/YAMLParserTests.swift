import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

struct YAMLParserTests {
    func parse(_ text: String) -> (root: YAMLNode?, diagnostics: [Diagnostic]) {
        YAMLParser().parse(Array(text.utf8), file: "t.yaml")
    }

    @Test func nodesKeepOneBasedLinesAndColumnsInUnicodeScalars() throws {
        let root = try #require(parse("name: x\nplace: {ville: \"Zürich\", über: 12}\nlist:\n  - a\n  - b\n").root)
        guard case .mapping(let pairs) = root.kind else {
            Issue.record("root is not a mapping")
            return
        }
        #expect(pairs.map { $0.key.scalar } == ["name", "place", "list"])
        #expect((pairs[0].value.line, pairs[0].value.column) == (1, 7))
        guard case .mapping(let inner) = pairs[1].value.kind else {
            Issue.record("place is not a mapping")
            return
        }
        // "über" starts after `place: {ville: "Zürich", ` — ü counts as one column.
        #expect((inner[1].key.line, inner[1].key.column) == (2, 26))
        #expect(inner[1].value.scalar == "12")
        guard case .sequence(let items) = pairs[2].value.kind else {
            Issue.record("list is not a sequence")
            return
        }
        #expect(items.map { "\($0.line):\($0.column)" } == ["4:5", "5:5"])
    }

    @Test func scalarStylesAreKept() throws {
        let root = try #require(parse("a: 1\nb: \"1\"\nc: |\n  text\n").root)
        guard case .mapping(let pairs) = root.kind else {
            Issue.record("not a mapping: \(root.kind)")
            return
        }
        let styles = pairs.map { pair -> YAMLNode.ScalarStyle? in
            if case .scalar(_, let style) = pair.value.kind { return style }
            return nil
        }
        #expect(styles == [.plain, .quoted, .block])
    }

    @Test func aliasesAreExpandedAtTheAliasPosition() throws {
        let root = try #require(parse("a: &x [1, 2]\nb: *x\n").root)
        guard case .mapping(let pairs) = root.kind, case .sequence(let items) = pairs[1].value.kind else {
            Issue.record("alias not expanded")
            return
        }
        #expect(items.count == 2)
        #expect((pairs[1].value.line, pairs[1].value.column) == (2, 4))
    }

    // MARK: - Hostile input: diagnostics, never a crash, bounded time and memory.

    @Test func emptyFileIsAnError() {
        #expect(parse("").diagnostics.map(\.description) == ["t.yaml:1:1: error: profile is empty"])
        #expect(parse("  \n\n").diagnostics.count == 1)
    }

    @Test func binaryJunkIsRejected() {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("seed \(seed)")
        var generator = SplitMix64(seed: seed)
        for _ in 0..<20 {
            let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let result = YAMLParser().parse(bytes, file: "junk")
            #expect(result.root == nil)
            #expect(result.diagnostics.contains { $0.severity == .error })
        }
    }

    @Test func fiftyMegabytesIsTooLarge() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("big.yaml")
        let line = Array("key: \(String(repeating: "x", count: 1000))\n".utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        for _ in 0..<(50 * 1024) { handle.write(Data(line)) }
        try handle.close()
        let result = try ProfileLoader.load(path: path)
        #expect(result.diagnostics.count == 1)
        #expect(result.diagnostics.first?.message.hasPrefix("file is too large for a profile") == true)
        // Also in memory, through the parser's own limit.
        let parsed = YAMLParser().parse([UInt8](repeating: 0x61, count: 17 * 1024 * 1024), file: "big")
        #expect(parsed.diagnostics.first?.message.hasPrefix("file is too large") == true)
    }

    @Test func tenThousandDeepNestingIsCutAtTheLimit() {
        let flow = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(parse(flow).diagnostics.map(\.description) == ["t.yaml:1:257: error: nesting is deeper than 256 levels"])
        let result = parse(String(repeating: "- ", count: 10_000) + "x\n")
        #expect(result.diagnostics.first?.message == "nesting is deeper than 256 levels")
    }

    @Test func billionLaughsIsStoppedByTheExpansionBudget() {
        var text = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        var previous = "a"
        for name in ["b", "c", "d", "e", "f", "g", "h", "i", "j"] {
            text += "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 10).joined(separator: ", ") + "]\n"
            previous = name
        }
        let result = parse(text)
        #expect(result.root == nil)
        #expect(result.diagnostics.map(\.description) == ["t.yaml:6:36: error: document expands to more than 1000000 nodes (alias bomb?); refusing to continue"])
    }

    @Test func tabsInIndentationAreExplained() {
        let result = parse("a:\n\tb: 1\n")
        #expect(result.diagnostics.map(\.description) == ["t.yaml:2:1: error: syntax error: tab character in indentation; YAML indents with spaces only"])
        // A tab inside a value is fine.
        #expect(parse("a: \"x\ty\"\n").diagnostics.isEmpty)
    }

    /// Lines end in LF, CR LF or CR: a file of an old Mac's CR-only lines is read like any
    /// other, with its problems at their lines (a comment first made it one long comment).
    @Test func crOnlyLinesAreLines() throws {
        let root = try #require(parse("# my profile\rversion: 1\rname: t\r").root)
        guard case .mapping(let pairs) = root.kind else { Issue.record("not a mapping"); return }
        #expect(pairs.map { $0.key.scalar } == ["version", "name"])
        #expect(pairs[1].key.line == 3)
        #expect(parse("a: 1\rb: 2\rc: \u{1}\r").diagnostics.first?.location.map { ($0.line, $0.column) } ?? (0, 0) == (3, 4))
        #expect(parse("a:\r\tb: 1\r").diagnostics.first?.message.contains("tab character in indentation") == true)
    }

    /// NEL, LS and PS end a line for libyaml and not for an editor: refused at their place,
    /// not reported as a syntax error a line off.
    @Test func lineSeparatorsNoEditorShowsAreRefusedWhereTheyAre() {
        for (scalar, what) in [("\u{2028}", "line separator"), ("\u{2029}", "paragraph separator"), ("\u{85}", "next line")] {
            let result = parse("version: 1\ndescription: \"Home\(scalar) office\"\nname: t\n")
            #expect(result.root == nil)
            #expect(result.diagnostics.map(\.description).first?.hasPrefix("t.yaml:2:19: error: U+") == true, "\(result.diagnostics)")
            #expect(result.diagnostics.first?.message.contains(what) == true)
        }
    }

    @Test func byteOrderMarkIsIgnoredWithAWarning() throws {
        let result = YAMLParser().parse([0xEF, 0xBB, 0xBF] + Array("a: 1\n".utf8), file: "t.yaml")
        #expect(result.root != nil)
        #expect(result.diagnostics.map(\.description) == ["t.yaml:1:1: warning: file starts with a UTF-8 byte order mark; it is ignored"])
    }

    @Test func nonUTF8IsReportedAtTheBadByte() {
        let result = YAMLParser().parse(Array("a: 1\nb: caf".utf8) + [0xE9] + Array("\n".utf8), file: "t.yaml")
        #expect(result.diagnostics.map(\.description) == ["t.yaml:2:7: error: file is not valid UTF-8 (byte 0xE9 at offset 11); profiles must be UTF-8 text"])
        // UTF-16 with a BOM is not UTF-8 either.
        #expect(YAMLParser().parse([0xFF, 0xFE, 0x61, 0x00], file: "t").root == nil)
    }

    @Test func syntaxErrorsPointAtTheProblem() {
        #expect(parse("a: [1, 2\nb: 3\n").diagnostics.first?.location?.line == 2)
        #expect(parse("a: b: c\n").diagnostics.map(\.description) == ["t.yaml:1:5: error: syntax error: mapping values are not allowed in this context"])
    }
}
