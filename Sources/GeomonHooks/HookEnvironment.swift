public import GeomonCore
import GeomonFormat

/// The environment and stdin a hook receives for one event.
///
/// Nothing is inherited from the daemon: a fixed PATH, `LANG=C.UTF-8`, `HOME` when known, and
/// the `GEOMON_*` variables. Values are data: they reach the hook through `execve`'s envp and
/// its stdin, never through a shell.
public enum HookEnvironment {
    /// The PATH every hook gets.
    public static let hookPath = HookSettings.searchPath

    /// Variables for one delivery attempt of `event`.
    public static func variables(
        event: GeoEvent, profileName: String, attempt: Int, isTest: Bool = false, home: String? = nil,
        extra: [String: String] = [:]
    ) -> [String: String] {
        var env = base(home: home, extra: extra)
        env["GEOMON_EVENT"] = event.kind.rawValue
        env["GEOMON_EVENT_ID"] = event.id
        env["GEOMON_FENCE"] = event.fenceID ?? ""
        env["GEOMON_FENCE_NAME"] = event.fenceName ?? ""
        env["GEOMON_TIME"] = event.time.rfc3339
        // Empty for a mode change before the first fix (no position).
        env["GEOMON_LAT"] = event.hasPosition ? JSON.number(event.coordinate.latitude, decimals: 7) : ""
        env["GEOMON_LON"] = event.hasPosition ? JSON.number(event.coordinate.longitude, decimals: 7) : ""
        env["GEOMON_ACCURACY_M"] = event.hasPosition ? JSON.number(event.accuracyMeters, decimals: 1) : ""
        env["GEOMON_PROFILE"] = profileName
        env["GEOMON_ATTEMPT"] = String(attempt)
        if isTest { env["GEOMON_TEST"] = "1" }
        if let approach = event.approach {
            for (name, value) in EventRule.approachMembers(approach) { env["GEOMON_APPROACH_" + name.uppercased()] = value }
        }
        if let figures = event.figures { env.merge(figures.variables) { _, new in new } }
        return env
    }

    /// The variables shared by every hook, heartbeat included.
    /// The variables shared by every hook, heartbeat included; `extra` is the hook's own
    /// `env:`/`env_file:` (validated: never `LD_*` or `GEOMON_*`), which may replace `PATH`,
    /// `LANG` and `HOME`.
    public static func base(home: String?, extra: [String: String] = [:]) -> [String: String] {
        var env = ["PATH": hookPath, "LANG": "C.UTF-8"]
        if let home, !home.isEmpty { env["HOME"] = home }
        for (name, value) in extra where !name.hasPrefix("GEOMON_") && !name.hasPrefix("LD_") { env[name] = value }
        return env
    }

    /// The event as one JSON object followed by a newline (hook stdin): the event's one
    /// encoding (`EventEncoding`) plus `profile`, `attempt` and `test`, and for one release the
    /// old names `event` (= `type`) and `event_id` (= `id`).
    public static func stdinJSON(event: GeoEvent, profileName: String, attempt: Int, isTest: Bool = false) -> String {
        var json = EventEncoding.object(event)
        json.add("profile", profileName)
        json.add("attempt", attempt)
        json.add("test", isTest)
        json.add("event", event.kind.rawValue)
        json.add("event_id", event.id)
        return json.text + "\n"
    }

    /// A complete invocation of `spec` for one attempt at delivering `event`.
    public static func invocation(
        argv: [String], timeout: Duration, event: GeoEvent, profileName: String, profileDirectory: String,
        attempt: Int, isTest: Bool = false, home: String? = nil, extra: [String: String] = [:]
    ) -> HookInvocation {
        HookInvocation(
            argv: argv,
            environment: variables(event: event, profileName: profileName, attempt: attempt, isTest: isTest, home: home, extra: extra),
            stdin: Array(stdinJSON(event: event, profileName: profileName, attempt: attempt, isTest: isTest).utf8),
            workingDirectory: profileDirectory,
            timeout: timeout
        )
    }
}
