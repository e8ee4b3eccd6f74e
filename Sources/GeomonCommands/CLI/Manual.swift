/// geomon(1) and the bash completion, generated from the same declarations as `--help`
/// (`GeomonCLI.entries`, each command's `CommandSpec`): an option added to a command appears in
/// all three. `scripts/package-deb.sh` writes them with `geomon manual` and `geomon completion bash`.
enum Manual {
    /// geomon(1) in man(7) roff.
    static func page(date: String) -> String {
        var out = """
        .TH GEOMON 1 "\(date)" "geomon \(GeomonCLI.version)" "User Commands"
        .SH NAME
        geomon \\- low\\-power geofence and significant\\-change monitor
        .SH SYNOPSIS
        .B geomon
        .I COMMAND
        .RI [ OPTIONS ]
        .br
        .B geomon \\-\\-help
        |
        .B \\-\\-version
        .SH DESCRIPTION
        geomon watches geofences and significant location changes at low power. A YAML profile
        (see
        .BR geomon\\-profile (5))
        says what to watch and how; positions come from gpsd, GeoClue or a coarse command, or from
        recorded tracks for replay. Events are stored in SQLite and delivered to hook programs and
        an MQTT broker, with retries and without loss across crashes and restarts.
        .SH COMMANDS

        """
        for spec in GeomonCLI.allSpecs {
            out += ".SS \(roff(spec.usage.map { $0.hasPrefix("usage: ") ? String($0.dropFirst(7)) : $0.trimmingLeadingSpaces }.joined(separator: " ")))\n"
            out += roff(spec.abstract) + ".\n"
            if !spec.discussion.isEmpty {
                for paragraph in Self.paragraphs(spec.discussion) {
                    out += ".PP\n" + roff(paragraph.split(separator: "\n").joined(separator: " ")) + "\n"
                }
            }
            for argument in spec.arguments {
                out += ".TP\n.I \(roff(argument.name))\n\(roff(argument.help))\n"
            }
            for option in spec.options {
                out += ".TP\n.B \(roff(option.name))"
                if let value = option.value { out += " \\fI\(roff(value))\\fR" }
                out += "\n" + roff(option.help + (spec.required.contains(option.name) ? " (required)" : "")) + "\n"
            }
        }
        out += """
        .SH EXIT STATUS
        0 ok, 1 runtime failure, 64 usage error, 65 invalid data (an invalid profile, a track
        without fixes), 66 input missing or unreadable, 69 a service unavailable (gpsd, an MQTT
        broker).
        .SH FILES
        .TP
        .I /etc/geomon/NAME.yaml
        The profile of the service instance geomon@NAME.
        .TP
        .I /var/lib/geomon/NAME.db
        Its database (events, deliveries, MQTT outbox, recent fixes), mode 0600.
        .SH SEE ALSO
        .BR geomon\\-profile (5),
        .BR gpsd (8),
        .BR mosquitto (8),
        .BR systemd.service (5);
        /usr/share/doc/geomon/README.md and /usr/share/doc/geomon/docs/.

        """
        return out
    }

    /// The bash completion: commands, each command's options, choices, files by extension.
    static func bashCompletion() -> String {
        var cases = ""
        for spec in GeomonCLI.allSpecs {
            let options = (spec.options.map(\.name) + ["--help"]).joined(separator: " ")
            var values = ""
            for option in spec.options where !option.isFlag {
                let action: String
                switch option.completion {
                case .choices: action = "COMPREPLY=($(compgen -W '\(option.choices.joined(separator: " "))' -- \"$cur\"))"
                case let .file(extensions): action = extensions.isEmpty ? "_geomon_files ''" : "_geomon_files '\(extensions.joined(separator: "|"))'"
                case .directory: action = "_geomon_dirs"
                case .none: action = "COMPREPLY=()"
                }
                values += "            \(option.name)) \(action); return ;;\n"
            }
            let positional: String
            switch spec.arguments.first?.completion {
            case let .file(extensions)?: positional = extensions.isEmpty ? "_geomon_files ''" : "_geomon_files '\(extensions.joined(separator: "|"))'"
            case .directory?: positional = "_geomon_dirs"
            default: positional = "COMPREPLY=()"
            }
            cases += """
                "\(spec.name)")
                    case "$prev" in
            \(values)        esac
                    if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W '\(options)' -- "$cur")); else \(positional); fi
                    ;;

            """
        }
        // First words once (`fences` also begins `fences here` and `fences remove`).
        var firstWords: [String] = []
        var seconds: [String: [String]] = [:]
        for entry in GeomonCLI.entries {
            let words = entry.name.split(separator: " ").map(String.init)
            if !firstWords.contains(words[0]) { firstWords.append(words[0]) }
            if words.count == 2 { seconds[words[0], default: []].append(words[1]) }
        }
        let commands = firstWords.joined(separator: " ")
        let pairs = firstWords.compactMap { first -> String? in
            seconds[first].map { "        \(first)) pair='\($0.joined(separator: " "))' ;;" }
        }.joined(separator: "\n")
        let groups = GeomonCLI.entries.compactMap { entry -> String? in
            guard case let .group(group) = entry else { return nil }
            return "        \(group.name)) sub='\(group.words.joined(separator: " "))' ;;"
        }.joined(separator: "\n")
        return """
        # bash completion for geomon (generated by `geomon completion bash` from the commands'
        # declarations, the same ones --help prints).

        _geomon_files() {
            local IFS=$'\\n' pattern=$1
            compopt -o filenames 2>/dev/null
            if [[ -n "$pattern" ]]; then
                local restore; restore=$(shopt -p extglob); shopt -s extglob
                COMPREPLY=($(compgen -f -X "!*.@($pattern)" -- "$cur") $(compgen -d -- "$cur"))
                eval "$restore"
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
        }

        _geomon_dirs() {
            local IFS=$'\\n'
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
        }

        _geomon() {
            local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
            if (( COMP_CWORD == 1 )); then
                COMPREPLY=($(compgen -W '\(commands) --help --version' -- "$cur"))
                return
            fi
            local command=${COMP_WORDS[1]} sub= pair=
            case "$command" in
        \(groups)
        \(pairs)
            esac
            if [[ -n "$sub" ]]; then
                if (( COMP_CWORD == 2 )); then
                    COMPREPLY=($(compgen -W "$sub" -- "$cur"))
                    return
                fi
                command="$command ${COMP_WORDS[2]}"
            elif [[ -n "$pair" ]]; then
                # A command that two-word commands extend (`fences`, `fences here`).
                if (( COMP_CWORD == 2 )) && [[ "$cur" != -* ]]; then
                    COMPREPLY=($(compgen -W "$pair" -- "$cur"))
                    return
                fi
                if (( COMP_CWORD > 2 )) && [[ " $pair " == *" ${COMP_WORDS[2]} "* ]]; then command="$command ${COMP_WORDS[2]}"; fi
            fi
            case "$command" in
        \(cases)    esac
        }

        complete -F _geomon geomon

        """
    }

    /// Paragraphs (separated by blank lines).
    static func paragraphs(_ text: String) -> [String] {
        var result: [String] = []
        var current: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) {
                if !current.isEmpty { result.append(current.joined(separator: "\n")) }
                current = []
            } else {
                current.append(line)
            }
        }
        if !current.isEmpty { result.append(current.joined(separator: "\n")) }
        return result
    }

    /// Text for roff: backslashes, hyphens and leading dots or quotes escaped.
    static func roff(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "`": out += ""
            default: out.append(character)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}

private extension String {
    var trimmingLeadingSpaces: String { String(drop { $0 == " " }) }
}

/// `geomon manual`: prints geomon(1).
struct ManualCommand: GeomonCommand {
    static let spec = CommandSpec(
        "manual",
        abstract: "Prints the geomon(1) man page (roff), generated from the commands' declarations",
        discussion: "The package installs it; `geomon manual | man -l -` reads it without installing.",
        options: [.option("--date", "DATE", "the page's date (default: the release's)")]
    )

    var date: String

    init(_ arguments: ParsedArguments) throws {
        date = arguments.value("--date") ?? GeomonCLI.releaseDate
    }

    func run() throws -> Int32 {
        print(Manual.page(date: date), terminator: "")
        return 0
    }
}

/// `geomon completion bash`: prints the bash completion.
struct CompletionCommand: GeomonCommand {
    static let spec = CommandSpec(
        "completion",
        abstract: "Prints the bash completion (commands, options, their values, profile paths)",
        discussion: "Install it as /usr/share/bash-completion/completions/geomon, or `source <(geomon completion bash)`.",
        arguments: [ArgumentSpec("SHELL", "the shell: bash")]
    )

    init(_ arguments: ParsedArguments) throws {
        let shell = arguments.positionals.first ?? ""
        guard shell == "bash" else { throw UsageError("only 'bash' completion is generated (got '\(shell)')") }
    }

    func run() throws -> Int32 {
        print(Manual.bashCompletion(), terminator: "")
        return 0
    }
}
