import Foundation
import GeomonTestSupport
import Testing

/// geomon(1) and the bash completion are generated from the commands' declarations: every
/// command and every option `--help` shows is in both.
struct ManualTests {
    /// Every command's name and options, read from `geomon COMMAND --help`.
    static func declared() throws -> [(command: String, options: [String])] {
        let top = try runGeomon(["--help"])
        let commands = top.stdout.split(separator: "\n").drop { !$0.hasPrefix("commands:") }.dropFirst()
            .prefix { $0.hasPrefix("  ") }.filter { !$0.hasPrefix("   ") }.compactMap { $0.split(separator: " ").first.map(String.init) }
        var result: [(String, [String])] = []
        for command in commands {
            let help = try runGeomon([command, "--help"])
            let subcommands = help.stdout.split(separator: "\n").drop { !$0.hasPrefix("subcommands:") }.dropFirst()
                .prefix { $0.hasPrefix("  ") }.filter { !$0.hasPrefix("   ") }.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
            for name in subcommands.isEmpty ? [command] : subcommands {
                let text = try runGeomon(name.split(separator: " ").map(String.init) + ["--help"]).stdout
                let options = text.matches(of: /\n  (--[a-z0-9-]+)/).map { String($0.1) }
                result.append((name, options))
            }
        }
        return result
    }

    @Test func theManPageAndTheCompletionNameEveryCommandAndOption() throws {
        let page = try runGeomon(["manual"])
        #expect(page.exitCode == 0)
        let completion = try runGeomon(["completion", "bash"])
        #expect(completion.exitCode == 0)
        let declared = try Self.declared()
        #expect(declared.count >= 19, "\(declared.map(\.command))")
        for (command, options) in declared {
            #expect(page.stdout.contains(".SS geomon \(command.replacingOccurrences(of: "-", with: "\\-"))"), "geomon(1) lacks \(command)")
            #expect(completion.stdout.contains("\"\(command)\")"), "the completion lacks \(command)")
            #expect(!options.isEmpty || command == "completion" || command == "hooks list" || command == "hooks dead", "\(command) has no options?")
            for option in options {
                #expect(page.stdout.contains(".B \(option.replacingOccurrences(of: "-", with: "\\-"))"), "geomon(1) lacks \(command) \(option)")
                #expect(completion.stdout.contains(option), "the completion lacks \(command) \(option)")
            }
        }
    }

    @Test func theManPagesRenderWithoutWarningsAndTheCompletionCompletes() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let page1 = try dir.write("geomon.1", try runGeomon(["manual"]).stdout)
        let profileMan = try runProcess(URL(fileURLWithPath: "/usr/bin/python3"),
                                        [TestSupport.packageRoot.appendingPathComponent("scripts/profile-man.py").path,
                                         TestSupport.packageRoot.appendingPathComponent("docs/profile-reference.md").path, "0", "2026-12-01"])
        #expect(profileMan.exitCode == 0, "\(profileMan.stderr)")
        let page5 = try dir.write("geomon-profile.5", profileMan.stdout)
        for page in [page1, page5] {
            // lintian's own check of a manual page.
            let man = try runProcess(URL(fileURLWithPath: "/usr/bin/man"), ["--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", page],
                                     environment: ["LC_ALL": "C.UTF-8", "MANROFFSEQ": "", "MANWIDTH": "120", "PATH": "/usr/bin:/bin"])
            #expect(man.exitCode == 0 && man.stderr.isEmpty, "\(page): \(man.stderr)")
        }
        #expect(profileMan.stdout.contains("password_file") && profileMan.stdout.contains("desktop_id"))
        try Self.checkRenderedProfilePage(page5)

        // The completion in a plain bash: commands, a group's subcommands, an option's choices.
        let script = try dir.write("geomon.bash", try runGeomon(["completion", "bash"]).stdout)
        func complete(_ words: [String]) throws -> [String] {
            let line = words.map { "'\($0)'" }.joined(separator: " ")
            let program = "source '\(script)'; COMP_WORDS=(\(line)); COMP_CWORD=\(words.count - 1); _geomon; printf '%s\\n' \"${COMPREPLY[@]}\""
            return try runProcess(URL(fileURLWithPath: "/bin/bash"), ["--norc", "-c", program]).stdout.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["geomon", "rep"]) == ["replay"])
        #expect(try complete(["geomon", "publish", ""]).sorted() == ["list", "retry"])
        #expect(try complete(["geomon", "replay", "--format", ""]).sorted() == ["json", "text"])
        #expect(try complete(["geomon", "replay", "--pub"]).sorted() == ["--publish", "--publish-wait"])
        // Two-word commands: their first word once, their second words after it, their own
        // options after both.
        #expect(try complete(["geomon", "f"]) == ["fences"])
        #expect(try complete(["geomon", "h"]) == ["hooks"])
        #expect(try complete(["geomon", "fences", ""]).sorted() == ["here", "remove"])
        #expect(try complete(["geomon", "fences", "here", "--na"]) == ["--name"])
        #expect(try complete(["geomon", "fences", "--pro"]) == ["--profile"])
    }

    /// A group's subcommand is the first word that is neither an option nor an option's value:
    /// `publish --db retry list` lists the database named `retry`; it is no `publish retry`.
    @Test func aGroupsSubcommandIsNoOptionsValue() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = try runProcess(TestSupport.geomonBinary, ["publish", "--db", "retry", "list"], currentDirectory: dir.url)
        #expect(result.exitCode == 66 && result.stderr == "geomon: error: retry: no such database\n", "\(result.stderr)")
    }

    /// geomon-profile(5) as a reader sees it (rendered without hyphenation): each bullet of
    /// profile-reference.md is one bullet, all of its lines in it; each example starts at the
    /// paragraph margin, not inside the list entry before it; no Markdown escape shows.
    static func checkRenderedProfilePage(_ page: String) throws {
        let rendered = try runProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "man -l -Tutf8 '\(page)' | col -bx"],
                                      environment: ["LC_ALL": "C.UTF-8", "MANROFFOPT": "-rHY=0", "MANWIDTH": "100", "PATH": "/usr/bin:/bin"])
        #expect(rendered.exitCode == 0, "\(rendered.stderr)")
        let lines = rendered.stdout.components(separatedBy: "\n")
        func words(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        func plain(_ markdown: String) -> String {
            var t = markdown.replacing(/\[([^\]]+)\]\([^)]+\)/) { String($0.1) }
            t = t.replacingOccurrences(of: "`", with: "").replacingOccurrences(of: "**", with: "")
            t = t.replacing(/\*([^*\s][^*]*)\*/) { String($0.1) }
            return words(t.replacingOccurrences(of: "\\|", with: "|"))
        }
        // The rendered bullets: from "•" to the next blank line.
        var bullets: [String] = [], current: [String]?
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("•") {
                if let current { bullets.append(words(current.joined(separator: " "))) }
                current = [String(trimmed.dropFirst())]
            } else if !trimmed.isEmpty, current != nil {
                current?.append(trimmed)
            } else if let done = current {
                bullets.append(words(done.joined(separator: " ")))
                current = nil
            }
        }
        if let current { bullets.append(words(current.joined(separator: " "))) }
        // The Markdown's bullets with their continuation lines, and its examples' first lines.
        let reference = try String(contentsOf: TestSupport.packageRoot.appendingPathComponent("docs/profile-reference.md"), encoding: .utf8)
        var sourceBullets: [String] = [], exampleStarts: [String] = []
        var inCode = false, codeStart = false, open: [String]?
        for line in reference.components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                inCode.toggle(); codeStart = inCode
                if let done = open { sourceBullets.append(plain(done.joined(separator: " "))); open = nil }
                continue
            }
            if inCode {
                if codeStart, !line.trimmingCharacters(in: .whitespaces).isEmpty { exampleStarts.append(line); codeStart = false }
                continue
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("- ") || trimmed.hasPrefix("* ") {
                if let done = open { sourceBullets.append(plain(done.joined(separator: " "))) }
                open = [String(trimmed.dropFirst(2))]
            } else if open != nil, line.hasPrefix(" "), !trimmed.isEmpty {
                open?.append(trimmed)
            } else if let done = open {
                sourceBullets.append(plain(done.joined(separator: " ")))
                open = nil
            }
        }
        #expect(sourceBullets.count >= 20)
        for bullet in sourceBullets {
            #expect(bullets.contains { $0.contains(bullet) }, "not one bullet in geomon-profile(5): \(bullet.prefix(80))…")
        }
        // Paragraphs start at the margin of the page's first paragraph.
        let margin = try #require(lines.first { $0.hasPrefix(" ") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }).prefix { $0 == " " }.count
        #expect(exampleStarts.count >= 10)
        for start in exampleStarts {
            let text = start.trimmingCharacters(in: .whitespaces)
            let found = lines.filter { $0.trimmingCharacters(in: .whitespaces) == text }
            #expect(found.contains { $0.prefix { $0 == " " }.count == margin + (start.count - start.drop { $0 == " " }.count) },
                    "example '\(text)' is not at the paragraph margin (\(margin)): \(found.map { $0.prefix { $0 == " " || $0 == "\t" }.count })")
        }
        #expect(!rendered.stdout.contains("\\|"), "a Markdown escape shows in geomon-profile(5)")
    }
}
