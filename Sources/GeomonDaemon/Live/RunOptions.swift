import Glibc
public import GeomonSources

/// What `geomon run` was asked to do.
public struct RunOptions: Sendable {
    public var profilePath: String
    /// Database path; nil: the profile's `storage.path`, else `/var/lib/geomon/<name>.db`.
    public var databasePath: String?
    /// `HOST:PORT` overriding the profile's gpsd endpoint.
    public var gpsdOverride: (host: String, port: Int)?
    public var logLevel: LogLevel = .notice
    /// Accept group/world-writable profiles, hooks and databases (see docs/security.md).
    public var insecurePermissions: Bool = false
    /// Keep the receiver on all the time (the baseline the power policy is measured against).
    public var alwaysOn: Bool = false
    /// Print each event as a JSON line on stdout (besides logging it).
    public var printEvents: Bool = false
    /// Exit after this many seconds (tests, demos); nil runs until signalled.
    public var exitAfterSeconds: Double?
    /// The kernel's power-supply class, where the device's battery is read for MQTT's
    /// `batt`/`bs` (a directory laid out like it in tests).
    public var powerSupplyDirectory = PowerSupply.defaultDirectory
    /// Environment (NOTIFY_SOCKET, WATCHDOG_USEC, …).
    public var environment: [String: String] = [:]

    public init(profilePath: String) {
        self.profilePath = profilePath
    }
}

/// Parses `HOST:PORT` (or `[v6]:PORT`, or `HOST` alone with the default port 2947, an IPv6
/// address alone too). An unclosed bracket, or colons that are neither one port's nor an IPv6
/// address's, are no endpoint.
public func parseEndpoint(_ text: String) -> (host: String, port: Int)? {
    var host = text
    var port = 2947
    if text.hasPrefix("[") {
        guard let close = text.firstIndex(of: "]") else { return nil }
        host = String(text[text.index(after: text.startIndex)..<close])
        let rest = text[text.index(after: close)...]
        if rest.hasPrefix(":") {
            guard let p = Int(rest.dropFirst()), (1...65535).contains(p) else { return nil }
            port = p
        } else if !rest.isEmpty {
            return nil
        }
    } else if let colon = text.lastIndex(of: ":"), text.filter({ $0 == ":" }).count == 1 {
        host = String(text[..<colon])
        guard let p = Int(text[text.index(after: colon)...]), (1...65535).contains(p) else { return nil }
        port = p
    } else if text.contains(":") {
        // Several colons: an IPv6 address alone, or nothing.
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
    }
    guard !host.isEmpty, !host.contains(where: { $0 == "[" || $0 == "]" || $0.isWhitespace }) else { return nil }
    if host.contains(":") {
        var address = in6_addr()
        guard inet_pton(AF_INET6, host, &address) == 1 else { return nil }
    }
    return (host, port)
}
