#if canImport(Glibc)
import Glibc
#endif
import GeomonCore

extension ProfileDecoder {
    // MARK: - publish

    func decodePublish(_ node: YAMLNode, into publish: inout PublishSettings, profileName: String) {
        guard let f = fields(node, path: "publish", allowed: ["mqtt"]) else { return }
        guard let mqttNode = f["mqtt"] else { return }
        let keys = ["host", "port", "tls", "username", "password_file", "client_id", "topic", "tracker_id", "qos", "locations", "keep", "keepalive", "waypoints", "status", "commands",
                    "protocol"]
        guard let m = fields(mqttNode, path: "publish.mqtt", allowed: keys, required: ["host", "topic"]) else { return }
        var mqtt = MQTTSettings(host: "", topic: "")
        if let n = m["host"], let v = string(n, "host") {
            if v.isEmpty || v.contains(where: { $0 == " " || $0 == "/" }) {
                error("'host' must be a host name or address such as broker.lan or 192.0.2.10 (got '\(v.clipped)')", n)
            } else if let (name, port) = Self.hostWithPort(v) {
                error("'host' must not include a port (got '\(v.clipped)'); write 'host: \(name.clipped)' and 'port: \(port.clipped)'", n)
            } else {
                mqtt.host = v
            }
        }
        if let n = m["port"], let v = integer(n, "port", range: 1...65535) { mqtt.port = v }
        if let n = m["tls"] {
            if let t = fields(n, path: "publish.mqtt.tls", allowed: ["ca_file", "cert_file", "key_file"]) {
                var tls = MQTTSettings.TLS()
                if let n = t["ca_file"] { tls.caFile = readableFile(n, "ca_file", secret: false) }
                if let n = t["cert_file"] { tls.certFile = readableFile(n, "cert_file", secret: false) }
                if let n = t["key_file"] { tls.keyFile = readableFile(n, "key_file", secret: true) }
                if (t["cert_file"] == nil) != (t["key_file"] == nil) {
                    error("'cert_file' and 'key_file' go together: give both for a client certificate, or neither", n)
                }
                mqtt.tls = tls
            }
        }
        if let n = m["username"], let v = string(n, "username") {
            if v.isEmpty { error("'username' must not be empty", n) } else { mqtt.username = v }
        }
        if let n = m["password_file"] {
            if let path = readableFile(n, "password_file", secret: true) {
                mqtt.passwordFile = path
                mqtt.password = Self.firstLine(path)
                if mqtt.password?.isEmpty ?? true { error("the password file '\(path)' is empty", n) }
            }
            if m["username"] == nil { error("'password_file' needs a 'username' (MQTT sends a password only with a user name)", n) }
        }
        if let n = m["client_id"], let v = string(n, "client_id") {
            if v.isEmpty || v.utf8.count > 65535 || v.contains(where: { $0.isNewline }) {
                error("'client_id' must be 1 to 65535 bytes on one line", n)
            } else {
                mqtt.clientID = v
            }
        }
        if let n = m["topic"], let v = string(n, "topic") {
            if let problem = Self.topicProblem(v) { error(problem, n) } else { mqtt.topic = v }
        }
        if let n = m["tracker_id"], let v = string(n, "tracker_id") {
            if v.isEmpty || v.count > 2 || v.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "\\" }) {
                error("'tracker_id' is OwnTracks' 'tid': 1 or 2 characters such as 'v1' (got '\(v.clipped)')", n)
            } else {
                mqtt.trackerID = v
            }
        }
        if let n = m["qos"], let v = integer(n, "qos", range: 0...2) { mqtt.qos = v }
        if let n = m["locations"], let v = choice(n, "locations", MQTTSettings.Locations.allCases.map(\.rawValue)) {
            mqtt.locations = MQTTSettings.Locations(rawValue: v) ?? .significant
        }
        if let n = m["waypoints"], let v = boolean(n, "waypoints") {
            mqtt.waypoints = v
        } else if homeAssistantZones {
            // Home Assistant would import its own zones back as "USER DEVICE - NAME" zones.
            mqtt.waypoints = false
        }
        if let n = m["status"], let v = boolean(n, "status") { mqtt.status = v }
        if let n = m["protocol"] {
            // `5` and `3.1.1` as YAML reads them: a number and a string.
            let text = n.scalar == "5.0" ? "5" : (n.scalar ?? "")
            if let version = MQTTSettings.ProtocolVersion(rawValue: text) {
                mqtt.protocolVersion = version
            } else {
                error("'protocol' must be 5 or 3.1.1 (got '\(text.clipped)')", n)
            }
        }
        if let n = m["commands"], let v = boolean(n, "commands") { mqtt.commands = v }
        if let n = m["keep"], let k = fields(n, path: "publish.mqtt.keep", allowed: ["max_pending", "max_age"]) {
            if let n = k["max_pending"], let v = integer(n, "max_pending", range: 1...100_000_000) { mqtt.maxPending = v }
            if let n = k["max_age"], let v = duration(n, "max_age") { mqtt.maxAge = v }
        }
        if let n = m["keepalive"], let v = duration(n, "keepalive") {
            if v < .seconds(5) || v > .seconds(65535) {
                error("'keepalive' must be between 5s and 65535s (MQTT's limits)", n)
            } else {
                mqtt.keepalive = v
            }
        }
        if m["tracker_id"] == nil, mqtt.effectiveTrackerID(profile: profileName).count < 2, let n = m["topic"] {
            warning("no 'tracker_id': OwnTracks wants a 2-character 'tid'; set one (e.g. 'tracker_id: \(String((profileName + "gm").prefix(2)))')", n)
        }
        publish.mqtt = mqtt
    }

    /// `broker:1883` split into the name and the port; nil for anything else (an IPv6 address
    /// has more than one colon).
    static func hostWithPort(_ host: String) -> (name: String, port: String)? {
        let parts = host.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
              parts[1].unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    /// Why `topic` cannot be a base topic to publish under, or nil.
    static func topicProblem(_ topic: String) -> String? {
        if topic.isEmpty { return "'topic' must not be empty" }
        if topic.contains("+") || topic.contains("#") {
            return "'topic' must not contain the MQTT wildcards '+' or '#' (got '\(topic.clipped)'); it is the topic geomon publishes to, e.g. owntracks/geomon/van-1"
        }
        if topic.hasPrefix("$") { return "'topic' must not start with '$' (the broker's own topics)" }
        if topic.hasPrefix("/") || topic.hasSuffix("/") { return "'topic' must not start or end with '/' (got '\(topic.clipped)')" }
        if topic.contains("//") { return "'topic' has an empty level ('//')" }
        if topic.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return "'topic' must not contain control characters" }
        if topic.utf8.count > 60000 { return "'topic' is too long" }
        return nil
    }

    /// A file the daemon reads (a password, a key, a CA bundle): resolved against the profile's
    /// directory, it must exist and be readable; with `secret`, readable by its owner only
    /// (mode 0600 or 0400), unless `--insecure-permissions`. Returns the resolved path.
    func readableFile(_ node: YAMLNode, _ name: String, secret: Bool) -> String? {
        guard let relative = string(node, name) else { return nil }
        guard !relative.isEmpty else {
            error("'\(name)' must not be empty", node)
            return nil
        }
        let path = resolvedPath(relative)
        var info = stat()
        guard stat(path, &info) == 0 else {
            error("\(name) '\(path)' does not exist", node)
            return nil
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            error("\(name) '\(path)' is not a regular file", node)
            return nil
        }
        guard access(path, R_OK) == 0 else {
            error("\(name) '\(path)' cannot be read: \(String(cString: strerror(errno)))", node)
            return nil
        }
        if secret, trust.enforced, info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            error("\(name) '\(path)' is readable by others (mode \(mode)); it holds a secret: chmod 600 '\(path)', \(FileTrust.overrideHint)", node)
            return nil
        }
        if let problem = trust.problem(path, what: name.replacingUnderscores, shown: relative) {
            error(problem, node)
            return nil
        }
        return path
    }

    /// The first line of a small file, without its line break (a password file).
    static func firstLine(_ path: String) -> String? {
        guard case let .success(bytes) = FileBytes.read(path) else { return nil }
        let line = bytes.prefix { $0 != 10 && $0 != 13 }
        return String(decoding: line, as: UTF8.self)
    }

    // MARK: - hooks' env and env_file

    /// `env:` (a mapping of names to values) and `env_file:` (NAME=value lines, a secret: 0600)
    /// of one hook; `env` wins over the file for a name in both.
    func hookEnvironment(env: YAMLNode?, file: YAMLNode?) -> [String: String] {
        var result: [String: String] = [:]
        if let file, let path = readableFile(file, "env_file", secret: true), case let .success(bytes) = FileBytes.read(path) {
            var lineNumber = 0
            for raw in bytes.split(separator: 10, omittingEmptySubsequences: false) {
                lineNumber += 1
                var line = String(decoding: raw, as: UTF8.self)
                if line.hasSuffix("\r") { line.removeLast() }
                let trimmed = line.drop { $0 == " " || $0 == "\t" }
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                let at = SourceLocation(file: path, line: lineNumber, column: 1)
                guard let equals = trimmed.firstIndex(of: "=") else {
                    diagnostics.append(.error("expected NAME=value (got '\(String(trimmed).clipped)')", at: at))
                    continue
                }
                let name = String(trimmed[..<equals]).trimmingSpaces
                if let problem = Self.environmentNameProblem(name) {
                    diagnostics.append(.error(problem, at: at))
                    continue
                }
                var value = String(trimmed[trimmed.index(after: equals)...]).trimmingSpaces
                if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                    value = String(value.dropFirst().dropLast())
                }
                result[name] = value
            }
        }
        if let env {
            if case .mapping(let pairs) = env.kind {
                var seen: [String: YAMLNode] = [:]
                for pair in pairs {
                    guard case .scalar(let name, _) = pair.key.kind else {
                        error("'env' names must be plain strings", pair.key)
                        continue
                    }
                    if let first = seen[name] {
                        error("duplicate key '\(name)' (first at \(position(first)))", pair.key)
                        continue
                    }
                    seen[name] = pair.key
                    if let problem = Self.environmentNameProblem(name) {
                        error(problem, pair.key)
                        continue
                    }
                    guard case .scalar(let value, _) = pair.value.kind, !pair.value.isNull else {
                        error("'env.\(name)' must be a string (got \(pair.value.kindDescription))", pair.value)
                        continue
                    }
                    result[name] = value
                }
            } else if !env.isNull {
                error("'env' must be a mapping of variable names to values (got \(env.kindDescription))", env)
            }
        }
        return result
    }

    static func environmentNameProblem(_ name: String) -> String? {
        let scalars = Array(name.unicodeScalars)
        let valid = !scalars.isEmpty && scalars.allSatisfy { ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
            && !("0"..."9").contains(scalars[0])
        if !valid { return "'\(name.clipped)' is not a variable name (letters, digits and '_', not starting with a digit)" }
        if name.hasPrefix("LD_") { return "'\(name)' is refused: LD_* variables change how programs are loaded" }
        if name.hasPrefix("GEOMON_") { return "'\(name)' is refused: GEOMON_* variables are geomon's own (the event it delivers)" }
        return nil
    }
}

private extension String {
    var replacingUnderscores: String { String(map { $0 == "_" ? " " : $0 }) }
}

extension ProfileDecoder {
    // MARK: - sources.coarse

    /// `sources.coarse`: `plugin: command` (exec, interval, accuracy as a distance) or
    /// `plugin: geoclue` (accuracy as GeoClue's level, desktop_id, thresholds, agent).
    func decodeCoarse(_ node: YAMLNode, into sources: inout SourceSettings) {
        var plugin = "command"
        if case .mapping(let pairs) = node.kind,
           let pair = pairs.first(where: { if case .scalar("plugin", _) = $0.key.kind { true } else { false } }),
           case .scalar(let value, _) = pair.value.kind {
            plugin = value
        }
        var coarse = CoarseSourceSettings()
        if plugin == "geoclue" {
            guard let c = fields(node, path: "sources.coarse", allowed: ["plugin", "accuracy", "desktop_id", "distance_threshold", "time_threshold", "agent"]) else { return }
            coarse.plugin = "geoclue"
            var geoclue = GeoClueSettings()
            if let n = c["accuracy"], let v = choice(n, "accuracy", GeoClueSettings.Accuracy.allCases.map(\.rawValue)) {
                geoclue.accuracy = GeoClueSettings.Accuracy(rawValue: v) ?? .city
            }
            if let n = c["desktop_id"], let v = string(n, "desktop_id") {
                if v.isEmpty || v.contains(where: { $0.isWhitespace || $0 == "/" }) {
                    error("'desktop_id' must be a word such as geomon (the section name in /etc/geoclue/geoclue.conf; got '\(v.clipped)')", n)
                } else {
                    geoclue.desktopID = v
                }
            }
            if let n = c["distance_threshold"], let v = quantity(n, "distance_threshold", .distance, .nonNegative) { geoclue.distanceThresholdMeters = v }
            if let n = c["time_threshold"], let v = duration(n, "time_threshold", .nonNegative) { geoclue.timeThreshold = v }
            if let n = c["agent"], let v = boolean(n, "agent") { geoclue.agent = v }
            coarse.expectedAccuracyMeters = geoclue.accuracy.expectedAccuracyMeters
            coarse.geoclue = geoclue
            if let problem = Self.systemBusProblem() { warning(problem, c.key("plugin") ?? node) }
        } else {
            guard let c = fields(node, path: "sources.coarse", allowed: ["plugin", "exec", "interval", "accuracy"], required: ["exec"]) else { return }
            if let n = c["plugin"], let v = choice(n, "plugin", ["command", "geoclue"]) { coarse.plugin = v }
            if let n = c["exec"], let argv = argv(n, what: "coarse source program") { coarse.exec = argv }
            if let n = c["interval"], let v = duration(n, "interval") { coarse.interval = v }
            if let n = c["accuracy"], let v = quantity(n, "accuracy", .distance) { coarse.expectedAccuracyMeters = v }
        }
        sources.coarse = coarse
    }

    /// Why `plugin: geoclue` cannot work on this machine as it is (a warning: the profile may
    /// be meant for another one), or nil.
    static func systemBusProblem() -> String? {
        let address = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) } ?? "unix:path=/run/dbus/system_bus_socket"
        if address.hasPrefix("unix:path=") {
            let path = String(address.dropFirst("unix:path=".count).prefix { $0 != "," })
            var info = stat()
            if stat(path, &info) != 0 {
                return "plugin 'geoclue' needs the D-Bus system bus, and there is none at \(path) on this machine (install and start dbus: apt install dbus)"
            }
        }
        if access("/usr/libexec/geoclue", X_OK) != 0 {
            return "plugin 'geoclue' needs GeoClue2, which is not installed on this machine (apt install geoclue-2.0)"
        }
        return nil
    }
}
