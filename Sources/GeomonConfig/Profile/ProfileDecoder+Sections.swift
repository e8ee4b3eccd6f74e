#if canImport(Glibc)
import Glibc
#endif
import GeomonCore
import GeomonFormat

/// What the cross-fence rules need of a fence beside the fence itself (`decodedFences`, same
/// order; its shape may live in the index only). Its `location` is where diagnostics point.
struct FenceRecord {
    /// Where a circle's radius was written (its lint warnings point there).
    var radiusLocation: SourceLocation?
    /// The GeoJSON file the fence came from, when it did.
    var geojsonFile: String?
    /// A circle's centre, or the middle of the shape's bounding box.
    var center: Coordinate
    /// The shape's hash (equal shapes, equal digests), for the duplicate-shape rule.
    var digest: Int
    /// The shape's inradius (`Inradius`) when it is below what the profile's accuracy needs
    /// (`ProfileDecoder.inradiusNeeded`); nil when it is enough.
    var smallInradius: (meters: Double, kind: String)? = nil
    /// False when the fence (or its file entry, or `defaults:`) says `lint: false`.
    var lint = true
}

extension ProfileDecoder {
    static let topLevelKeys = ["version", "name", "description", "mode", "sources", "significant_change", "movement", "policy", "modes", "transitions", "timezone", "defaults", "fences", "hooks", "publish", "storage"]

    /// Decodes the whole profile; nil only when the root is not a mapping. Missing or invalid
    /// parts are reported and replaced by defaults so that later rules can still run.
    func decodeProfile(_ root: YAMLNode, fences records: inout [FenceRecord]) -> Profile? {
        // A document that is only `---`, `...` or `~`.
        if root.isNull {
            diagnostics.append(.error("profile is empty", at: SourceLocation(file: file, line: 1, column: 1)))
            return nil
        }
        checkUnsupportedYAML(root)
        guard let top = fields(root, path: "", allowed: Self.topLevelKeys, required: ["version", "name", "mode"]) else { return nil }
        if let node = top["version"], let version = integer(node, "version", range: Int.min...Int.max), version != 1 {
            error("unsupported profile version \(version) (this geomon reads version 1)", node)
        }
        var name: String?
        if let node = top["name"], let text = string(node, "name") {
            if !Self.isProfileName(text) {
                error("'name' must be 1 to 64 lowercase letters, digits and '-', not starting with '-' (got '\(text.clipped)')", node)
            } else {
                name = text
            }
        }
        var mode: MonitoringMode?
        if let node = top["mode"], let text = choice(node, "mode", MonitoringMode.allCases.map(\.rawValue)) {
            mode = MonitoringMode(rawValue: text)
        }
        var profile = Profile(name: name ?? "invalid", mode: mode ?? .regions)
        modeIsKnown = mode != nil
        if let node = top["description"], let text = string(node, "description") { profile.description = text }
        if let node = top["sources"] { decodeSources(node, into: &profile.sources) }
        if let node = top["significant_change"] { decodeSignificantChange(node, into: &profile.significantChange) }
        if let node = top["movement"] { decodeMovement(node, into: &profile.movement) }
        if let node = top["policy"] { decodePolicy(node, into: &profile.policy) }
        if let node = top["transitions"] { decodeTransitions(node, into: &profile.transitions) }
        if let gnss = profile.sources.gnss, profile.mode != .significantChange {
            inradiusNeeded = gnss.minAccuracyMeters + profile.transitions.hysteresisMeters + Self.certainCoreMeters
        }
        if let node = top["defaults"], let f = fields(node, path: "defaults", allowed: Self.fenceRuleKeys) {
            fenceDefaults = decodeRules(f, base: nil)
        }
        if let node = top["fences"], let items = list(node, "fences") {
            for item in items { decodeFenceEntry(item, into: &records) }
            // Handed over, not copied: a large file's fences are held once.
            profile.setFences(decodedFences, index: indexBuilder.build())
            decodedFences = []
        }
        // Before `modes:`, whose entries may change what it publishes.
        if let node = top["publish"] { decodePublish(node, into: &profile.publish, profileName: profile.name) }
        // After the sources, `movement:`, the policy and `publish:`, which its entries build on.
        if let node = top["modes"] { profile.modes = decodeModes(node, profile: profile) }
        if let node = top["timezone"] {
            if let zone = decodeTimeZone(node) { profile.timeZone = zone }
        } else if profile.fences.contains(where: { $0.active != nil }) || profile.modes.contains(where: { $0.when.active != nil }) {
            profile.timeZone = Self.systemTimeZone()
        }
        if let node = top["hooks"] {
            decodeHooks(node, into: &profile.hooks)
            // Hooks for events no rule of the profile reports.
            let movement = profile.movement
            func missing(_ kind: EventKind) -> String? {
                switch kind {
                case .approach: profile.fences.contains { $0.approach != nil } ? nil : "no fence has 'approach:'"
                case .moving, .still: movement.motionEvents ? nil : "'movement:' has no 'motion: true'"
                case .tripStart, .tripEnd: movement.trips != nil ? nil : "'movement:' has no 'trips:'"
                case .arrival, .departure: movement.visits != nil ? nil : "'movement:' has no 'visits:'"
                case .overspeed, .overspeedEnd: profile.fences.contains { $0.speedLimit != nil } ? nil : "no fence has 'speed_limit:'"
                case .mode: profile.modes.isEmpty ? "the profile has no 'modes:'" : nil
                case .enter, .exit, .dwell, .location: nil
                }
            }
            for kind in EventKind.allCases where !profile.hooks.hooks(for: kind).isEmpty {
                if let why = missing(kind), let key = nodes["hooks.\(kind.rawValue)"] {
                    warning("'hooks.\(kind.rawValue)' is set but \(why); these hooks never run", key)
                }
            }
        }
        if let node = top["storage"] { decodeStorage(node, into: &profile.storage) }
        return profile
    }

    // MARK: - Sources

    func decodeSources(_ node: YAMLNode, into sources: inout SourceSettings) {
        guard let f = fields(node, path: "sources", allowed: ["gnss", "coarse", "motion"]) else { return }
        if let gnssNode = f["gnss"], let g = fields(gnssNode, path: "sources.gnss", allowed: ["plugin", "host", "port", "device", "min_accuracy", "power"]) {
            var gnss = GNSSSourceSettings()
            if let n = g["plugin"], let v = choice(n, "plugin", ["gpsd"]) { gnss.plugin = v }
            if let n = g["host"], let v = string(n, "host") {
                if v.isEmpty { error("'host' must not be empty", n) } else { gnss.host = v }
            }
            if let n = g["port"], let v = integer(n, "port", range: 1...65535) { gnss.port = v }
            if let n = g["device"], let v = string(n, "device") {
                if v.hasPrefix("/") { gnss.device = v } else { error("'device' must be an absolute path such as /dev/ttyACM0 (got '\(v.clipped)')", n) }
            }
            if let n = g["min_accuracy"], let v = quantity(n, "min_accuracy", .distance) { gnss.minAccuracyMeters = v }
            if let n = g["power"], let v = decodePower(n, restart: &gnss.restart) { gnss.power = v }
            sources.gnss = gnss
        }
        if let coarseNode = f["coarse"] {
            decodeCoarse(coarseNode, into: &sources)
        }
        if let motionNode = f["motion"] {
            decodeMotion(motionNode, into: &sources)
        }
    }

    /// `sources.motion`: `{plugin: iio, device:, sample:, window:, threshold:, foot_threshold:,
    /// still_after:, stale_after:, latency:, creep_speed:}` or `{plugin: command, exec: [argv],
    /// still_after:, stale_after:, latency:, creep_speed:}`.
    func decodeMotion(_ node: YAMLNode, into sources: inout SourceSettings) {
        let common = ["plugin", "still_after", "stale_after", "latency", "creep_speed"]
        var plugin = MotionSourceSettings.Plugin.iio
        if case .mapping(let pairs) = node.kind,
           let pair = pairs.first(where: { if case .scalar("plugin", _) = $0.key.kind { true } else { false } }),
           let v = choice(pair.value, "plugin", MotionSourceSettings.Plugin.allCases.map(\.rawValue)) {
            plugin = MotionSourceSettings.Plugin(rawValue: v) ?? .iio
        }
        var motion = MotionSourceSettings()
        motion.plugin = plugin
        switch plugin {
        case .iio:
            guard let m = fields(node, path: "sources.motion", allowed: common + ["device", "sample", "window", "threshold", "foot_threshold"]) else { return }
            if let n = m["device"], let v = string(n, "device") {
                if !v.hasPrefix("/") {
                    error("'device' must be an absolute path such as /sys/bus/iio/devices/iio:device0 (got '\(v.clipped)')", n)
                } else {
                    motion.device = v
                    if access(v + "/in_accel_x_raw", R_OK) != 0 {
                        warning("'device' \(v.clipped) has no readable in_accel_x_raw here: no accelerometer at that path on this machine", n)
                    }
                }
            }
            if let n = m["sample"], let v = quantity(n, "sample", .frequency) { motion.sampleHertz = v }
            if let n = m["window"], let v = duration(n, "window") { motion.window = v }
            if let n = m["threshold"], let v = quantity(n, "threshold", .acceleration) { motion.thresholdMetersPerSecondSquared = v }
            if let n = m["foot_threshold"], let v = quantity(n, "foot_threshold", .acceleration) { motion.footThresholdMetersPerSecondSquared = v }
            if let n = m["still_after"], let v = duration(n, "still_after") { motion.stillAfter = v }
            if let n = m["stale_after"], let v = duration(n, "stale_after") { motion.staleAfter = v }
            if let n = m["latency"], let v = duration(n, "latency", .nonNegative) { motion.latency = v }
            if let n = m["creep_speed"], let v = quantity(n, "creep_speed", .speed, .nonNegative) { motion.creepSpeedMetersPerSecond = v }
            // The activity needs two samples in each half of a window, movement two in it.
            let perWindow = motion.window.secondsValue * motion.sampleHertz
            if perWindow < 4, let n = m["window"] ?? m["sample"] {
                warning("'window' (\(motion.window.profileText)) holds \(NumberText.short(perWindow, 1)) samples at 'sample' (\(NumberText.short(motion.sampleHertz, 3)) Hz): "
                        + (perWindow < 2 ? "the accelerometer never says the device moves, nor what carries it" : "the accelerometer never says what carries the device (each half of a window needs 2 samples)")
                        + "; use a window of at least 4 samples", n)
            }
        case .command:
            guard let m = fields(node, path: "sources.motion", allowed: common + ["exec", "interval"], required: ["exec"]) else { return }
            if let n = m["exec"], let argv = argv(n, what: "motion program") { motion.exec = argv }
            if let n = m["interval"], let v = duration(n, "interval") { motion.restartInterval = v }
            if let n = m["still_after"], let v = duration(n, "still_after", .nonNegative) { motion.stillAfter = v }
            if let n = m["stale_after"], let v = duration(n, "stale_after") { motion.staleAfter = v }
            if let n = m["latency"], let v = duration(n, "latency", .nonNegative) { motion.latency = v }
            if let n = m["creep_speed"], let v = quantity(n, "creep_speed", .speed, .nonNegative) { motion.creepSpeedMetersPerSecond = v }
        }
        sources.motion = motion
    }

    /// `sources.gnss.power`: `watch`, `ubx`, `mtk`, `modemmanager`, `{method: modemmanager,
    /// modem: PATH}` or `{method: command, on: [argv], off: [argv]}`; a mapping may also say
    /// `restart: hot | warm | cold` (what the receiver keeps while off).
    func decodePower(_ node: YAMLNode, restart: inout RestartClass?) -> GNSSPowerMethod? {
        let methods = ["watch", "ubx", "mtk", "modemmanager", "command"]
        if case .scalar = node.kind {
            guard let v = choice(node, "power", methods) else { return nil }
            switch v {
            case "ubx": return .ubx
            case "mtk": return .mtk
            case "modemmanager": return .modemmanager(modem: nil)
            case "command":
                error("'power: command' needs the programs: power: {method: command, on: [PROGRAM, ARG…], off: [PROGRAM, ARG…]}", node)
                return nil
            default: return .watch
            }
        }
        guard let f = fields(node, path: "sources.gnss.power", allowed: ["method", "on", "off", "modem", "restart"]) else { return nil }
        if let n = f["restart"], let v = choice(n, "restart", RestartClass.allCases.map(\.rawValue)) { restart = RestartClass(rawValue: v) }
        guard let methodNode = f["method"] else {
            error("'power' needs 'method' (one of \(methods.joined(separator: ", ")))", node)
            return nil
        }
        guard let method = choice(methodNode, "method", methods) else { return nil }
        if method != "modemmanager", let n = f["modem"] {
            error("'modem' is only for 'method: modemmanager'", n)
            return nil
        }
        if method == "modemmanager" {
            for key in ["on", "off"] where f[key] != nil {
                if let n = f[key] { error("'\(key)' is only for 'method: command' (the 'modemmanager' method calls ModemManager)", n) }
            }
            guard let n = f["modem"] else { return .modemmanager(modem: nil) }
            guard let path = string(n, "modem"), path.hasPrefix("/org/freedesktop/ModemManager1/Modem/") else {
                error("'modem' is a ModemManager D-Bus object path such as /org/freedesktop/ModemManager1/Modem/0 (`mmcli -L` lists them)", n)
                return nil
            }
            return .modemmanager(modem: path)
        }
        guard method == "command" else {
            for key in ["on", "off"] where f[key] != nil {
                if let n = f[key] { error("'\(key)' is only for 'method: command' (the '\(method)' method sends its own commands)", n) }
            }
            return method == "ubx" ? .ubx : method == "mtk" ? .mtk : .watch
        }
        guard let onNode = f["on"], let offNode = f["off"] else {
            error("'method: command' needs both 'on' and 'off' (argv lists)", node)
            return nil
        }
        guard let on = argv(onNode, what: "power on command", key: "on"), let off = argv(offNode, what: "power off command", key: "off") else { return nil }
        return .command(on: on, off: off)
    }

    /// An argv list whose first element is checked as a program; exec[0] is resolved.
    func argv(_ node: YAMLNode, what: String, key: String = "exec") -> [String]? {
        if case .scalar(let text, _) = node.kind, !node.isNull {
            error("'\(key)' must be a list (argv), e.g. \(key): [\(text.clipped)]", node)
            return nil
        }
        guard let items = list(node, key) else { return nil }
        guard let first = items.first else {
            error("'\(key)' must name a program: the list is empty", node)
            return nil
        }
        var result: [String] = []
        for item in items {
            guard let text = string(item, "\(key) item") else { return nil }
            result.append(text)
        }
        switch ExecutableCheck.check(result[0], directory: absoluteDirectory, what: what, trust: trust) {
        case .ok(let path):
            result[0] = path
            return result
        case .problem(let message):
            error(message, first)
            return nil
        }
    }

    func decodeSignificantChange(_ node: YAMLNode, into settings: inout SignificantChangeSettings) {
        guard let f = fields(node, path: "significant_change", allowed: ["distance", "min_interval"]) else { return }
        if let n = f["distance"], let v = quantity(n, "distance", .distance) { settings.distanceMeters = v }
        if let n = f["min_interval"], let v = duration(n, "min_interval", .nonNegative) { settings.minInterval = v }
    }

    /// `movement: {motion: true, moving_speed: 1m/s, confirm: 30s, trips: {stop_after: 5m, radius: 100m},
    /// visits: {radius: 100m, min_duration: 5m}}`; `trips: true` and `visits: true` take the defaults.
    func decodeMovement(_ node: YAMLNode, into settings: inout MovementSettings) {
        guard let f = fields(node, path: "movement", allowed: ["motion", "moving_speed", "confirm", "trips", "visits"]) else { return }
        if let n = f["motion"], let v = boolean(n, "motion") { settings.motionEvents = v }
        if let n = f["moving_speed"], let v = quantity(n, "moving_speed", .speed) { settings.movingSpeedMetersPerSecond = v }
        if let n = f["confirm"], let v = duration(n, "confirm", .nonNegative) { settings.confirm = v }
        if let n = f["trips"] {
            if n.scalar != nil {
                if let on = boolean(n, "trips") { settings.trips = on ? TripSettings() : nil }
            } else if let t = fields(n, path: "movement.trips", allowed: ["stop_after", "radius"]) {
                var trips = TripSettings()
                if let n = t["stop_after"], let v = duration(n, "stop_after") { trips.stopAfter = v }
                if let n = t["radius"], let v = quantity(n, "radius", .distance) { trips.radiusMeters = v }
                settings.trips = trips
            }
        }
        if let n = f["visits"] {
            if n.scalar != nil {
                if let on = boolean(n, "visits") { settings.visits = on ? VisitSettings() : nil }
            } else if let v = fields(n, path: "movement.visits", allowed: ["radius", "min_duration"]) {
                var visits = VisitSettings()
                if let n = v["radius"], let x = quantity(n, "radius", .distance) { visits.radiusMeters = x }
                if let n = v["min_duration"], let x = duration(n, "min_duration") { visits.minDuration = x }
                settings.visits = visits
            }
        }
    }

    // MARK: - Policy and transitions

    /// `policy:`, or a mode's `policy:` (`path` "modes[0].policy") set over the profile's.
    func decodePolicy(_ node: YAMLNode, into policy: inout PolicySettings, path: String = "policy") {
        guard let f = fields(node, path: path, allowed: ["activity", "max_speed", "max_acceleration", "wake_margin", "min_sleep", "max_sleep", "fix_timeout", "retry_fix_timeout", "retry_max_interval", "max_latency", "outage", "stationary", "receiver"]) else { return }
        if let n = f["activity"], let v = choice(n, "activity", Activity.allCases.map(\.rawValue)), let activity = Activity(rawValue: v) { policy.activity = activity }
        if let n = f["max_speed"], let v = quantity(n, "max_speed", .speed) {
            policy.maxSpeedMetersPerSecond = v
            policy.maxSpeedSet = true
        }
        if let n = f["wake_margin"], let v = quantity(n, "wake_margin", .distance, .nonNegative) { policy.wakeMarginMeters = v }
        if let n = f["max_acceleration"], let v = quantity(n, "max_acceleration", .acceleration) {
            policy.maxAccelerationMetersPerSecondSquared = v
            policy.maxAccelerationSet = true
        }
        if let n = f["min_sleep"], let v = duration(n, "min_sleep") { policy.minSleep = v }
        if let n = f["max_sleep"], let v = duration(n, "max_sleep") { policy.maxSleep = v }
        if let n = f["fix_timeout"], let v = duration(n, "fix_timeout") { policy.fixTimeout = v }
        if let n = f["retry_fix_timeout"], let v = duration(n, "retry_fix_timeout") { policy.retryFixTimeout = v }
        if let n = f["retry_max_interval"], let v = duration(n, "retry_max_interval") { policy.retryMaxInterval = v }
        if let n = f["max_latency"], let v = duration(n, "max_latency", .nonNegative) { policy.maxLatency = v }
        if let n = f["outage"], let v = choice(n, "outage", OutageRule.allCases.map(\.rawValue)), let rule = OutageRule(rawValue: v) { policy.outage = rule }
        if let n = f["stationary"], let s = fields(n, path: "\(path).stationary", allowed: ["radius", "timeout"]) {
            if let n = s["radius"], let v = quantity(n, "radius", .distance) { policy.stationary.radiusMeters = v }
            if let n = s["timeout"], let v = duration(n, "timeout") { policy.stationary.timeout = v }
        }
        if let n = f["receiver"], let r = fields(n, path: "\(path).receiver", allowed: ["ttff_hot", "ttff_warm", "ttff_cold", "hot_window", "power_acquire", "power_track", "min_off"]) {
            if let n = r["ttff_hot"], let v = duration(n, "ttff_hot", .nonNegative) { policy.receiver.ttffHot = v }
            if let n = r["ttff_warm"], let v = duration(n, "ttff_warm", .nonNegative) { policy.receiver.ttffWarm = v }
            if let n = r["ttff_cold"], let v = duration(n, "ttff_cold", .nonNegative) { policy.receiver.ttffCold = v }
            if let n = r["hot_window"], let v = duration(n, "hot_window") { policy.receiver.hotWindow = v }
            if let n = r["power_acquire"], let v = quantity(n, "power_acquire", .power, .nonNegative) { policy.receiver.powerAcquireMilliwatts = v }
            if let n = r["power_track"], let v = quantity(n, "power_track", .power, .nonNegative) { policy.receiver.powerTrackMilliwatts = v }
            if let n = r["min_off"], let v = duration(n, "min_off", .nonNegative) { policy.receiver.minOff = v }
        }
    }

    func decodeTransitions(_ node: YAMLNode, into settings: inout TransitionSettings) {
        guard let f = fields(node, path: "transitions", allowed: ["hysteresis", "confirm", "initial"]) else { return }
        if let n = f["hysteresis"], let v = quantity(n, "hysteresis", .distance, .nonNegative) { settings.hysteresisMeters = v }
        if let n = f["confirm"] {
            if case .mapping = n.kind {
                guard let c = fields(n, path: "transitions.confirm", allowed: ["fixes", "time"]) else { return }
                if c["fixes"] == nil && c["time"] == nil {
                    error("'transitions.confirm' needs 'fixes', 'time' or both, e.g. {fixes: 2, time: 30s}", n)
                }
                // With only a time, the fixes that show it are enough however many they are.
                settings.confirm = c["fixes"] == nil ? 1 : settings.confirm
                if let m = c["fixes"], let v = integer(m, "fixes", range: 1...100) { settings.confirm = v }
                if let m = c["time"], let v = duration(m, "time", .nonNegative) {
                    if v > .seconds(86400) {
                        error("'time' is too large (at most 24h; got \(m.scalar ?? ""))", m)
                    } else {
                        settings.confirmTime = v
                    }
                }
            } else if let v = integer(n, "confirm", range: 1...100) {
                settings.confirm = v
            }
        }
        if let n = f["initial"], let v = choice(n, "initial", ["silent", "report"]), let initial = InitialReport(rawValue: v) { settings.initial = initial }
    }

    // MARK: - Hooks and storage

    func decodeHooks(_ node: YAMLNode, into hooks: inout HookSettings) {
        guard let f = fields(node, path: "hooks", allowed: EventKind.allCases.map(\.rawValue) + ["heartbeat", "retry"]) else { return }
        for kind in EventKind.allCases {
            if let n = f[kind.rawValue] { hooks[keyPath: HookSettings.list(for: kind)] = hookList(n, kind.rawValue) }
        }
        if let n = f["heartbeat"], let h = fields(n, path: "hooks.heartbeat", allowed: ["every", "run"], required: ["every", "run"]) {
            if let n = h["every"], let v = duration(n, "every") { hooks.heartbeatEvery = v }
            if let n = h["run"] { hooks.heartbeat = hookList(n, "run") }
        }
        if let n = f["retry"], let r = fields(n, path: "hooks.retry", allowed: ["attempts", "backoff", "max_backoff"]) {
            if let n = r["attempts"], let v = integer(n, "attempts", range: 1...100) { hooks.retry.attempts = v }
            if let n = r["backoff"], let v = duration(n, "backoff") { hooks.retry.backoff = v }
            if let n = r["max_backoff"], let v = duration(n, "max_backoff") { hooks.retry.maxBackoff = v }
        }
    }

    func hookList(_ node: YAMLNode, _ name: String) -> [HookSpec] {
        guard let items = list(node, name) else { return [] }
        var result: [HookSpec] = []
        for item in items {
            guard let h = fields(item, path: "hook", allowed: ["exec", "timeout", "when", "env", "env_file"], required: ["exec"]) else { continue }
            guard let n = h["exec"], let argv = argv(n, what: "hook program") else { continue }
            var spec = HookSpec(exec: argv)
            if let n = h["timeout"], let v = duration(n, "timeout") { spec.timeout = v }
            if let n = h["when"], let w = fields(n, path: "when", allowed: ["network", "external_power"]) {
                if let n = w["network"], let v = boolean(n, "network") { spec.when.network = v }
                if let n = w["external_power"], let v = boolean(n, "external_power") { spec.when.externalPower = v }
            }
            if h["env"] != nil || h["env_file"] != nil { spec.environment = hookEnvironment(env: h["env"], file: h["env_file"]) }
            result.append(spec)
        }
        return result
    }

    func decodeStorage(_ node: YAMLNode, into storage: inout StorageSettings) {
        guard let f = fields(node, path: "storage", allowed: ["path", "keep_fixes"]) else { return }
        if let n = f["path"], let v = string(n, "path") {
            if v.isEmpty { error("'path' must not be empty", n) } else { storage.path = resolvedPath(v) }
        }
        if let n = f["keep_fixes"], let v = duration(n, "keep_fixes") { storage.keepFixes = v }
    }
}
