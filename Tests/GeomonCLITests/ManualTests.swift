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
    }
}
