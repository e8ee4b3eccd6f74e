import Glibc
import GeomonSources

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
        guard isIPv6(text) else { return nil }
    }
    guard !host.isEmpty, !host.contains(where: { $0 == "[" || $0 == "]" || $0.isWhitespace }) else { return nil }
    if host.contains(":") { guard isIPv6(host) else { return nil } }
    return (host, port)
}

/// An IPv6 address, with a zone (`fe80::1%eth0`) or without.
private func isIPv6(_ text: String) -> Bool {
    let address = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
    guard let first = address.first, address.count == 1 || !address[1].isEmpty else { return false }
    var bytes = in6_addr()
    return inet_pton(AF_INET6, String(first), &bytes) == 1
}
