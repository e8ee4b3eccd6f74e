import GeomonCore

extension ProfileDecoder {
    /// Keys of a `modes:` entry.
    static let modeKeys = ["name", "when", "mode", "policy", "publish", "coarse"]
    /// Keys of a `modes:` entry's `when:`.
    static let modeConditionKeys = ["external_power", "battery_below", "battery_above", "activity", "moving", "active"]

    /// `modes:`: an ordered list of `{name, when, mode, policy, publish, coarse}` (docs/
    /// profile-reference.md, "modes"). Decoded after the sources, `movement:`, `policy:` and
    /// `publish:` of `profile`, which the entries change and are checked against. Entries with
    /// errors are reported and left out.
    func decodeModes(_ node: YAMLNode, profile: Profile) -> [ModeRule] {
        guard let items = list(node, "modes") else { return [] }
        var rules: [ModeRule] = []
        var names: [String: YAMLNode] = [:]
        // Entries whose conditions no input can make hold: they shadow no later entry.
        var neverHolds: Set<String> = []
        for (index, item) in items.enumerated() {
            let path = "modes[\(index)]"
            let before = diagnostics.count
            guard let rule = decodeModeEntry(item, path: path, profile: profile, names: &names) else { continue }
            // Lint only what decoded cleanly: a key left out by an error would mislead the rules.
            guard !diagnostics[before...].contains(where: { $0.severity == .error }) else { continue }
            let nameNode = nodes["\(path).name"] ?? item
            if let why = unreachableReason(rule, path: path, profile: profile) {
                warning("mode '\(rule.name)' is never chosen: \(why.text)", why.node)
                neverHolds.insert(rule.name)
            } else if let earlier = rules.first(where: { !neverHolds.contains($0.name) && rule.when.isCovered(by: $0.when) }) {
                let line = earlier.location.map { " (line \($0.line))" } ?? ""
                warning("mode '\(rule.name)' is never chosen: mode '\(earlier.name)'\(line) comes first and holds whenever it does", nameNode)
            }
            // An entry's activity names bounds that the profile's own max_speed or
            // max_acceleration, carried over into the entry's policy, override.
            if let node = nodes["\(path).policy.activity"], let policy = rule.policy {
                let carried = [("max_speed", policy.maxSpeedSet && profile.policy.maxSpeedSet && nodes["\(path).policy.max_speed"] == nil),
                               ("max_acceleration", policy.maxAccelerationSet && profile.policy.maxAccelerationSet && nodes["\(path).policy.max_acceleration"] == nil)]
                    .filter(\.1).map { "'\($0.0)'" }
                if !carried.isEmpty, policy.activity != .any {
                    warning("mode '\(rule.name)' sets 'activity: \(policy.activity.rawValue)', but the profile's \(carried.joined(separator: " and ")) \(carried.count == 1 ? "carries" : "carry") over into its policy and \(carried.count == 1 ? "overrides" : "override") the activity's bounds; set \(carried.count == 1 ? "it" : "them") in the mode too", node)
                }
            }
            // The entry's own latency budget, in the mode it runs (a `mode` of its own that
            // decoded, else the profile's).
            if let policy = rule.policy, let mode = rule.mode ?? (nodes["\(path).mode"] == nil && modeIsKnown ? profile.mode : nil) {
                checkLatencyBudget(policy, mode: mode, path: "\(path).policy", profile: profile)
                checkInheritedLatencyRoom(policy, mode: mode, path: "\(path).policy", profile: profile)
            }
            if !changesSomething(rule, path: path, profile: profile) {
                warning("mode '\(rule.name)' changes nothing: it runs the profile's own settings; give it a 'mode', 'policy', 'publish' or 'coarse' of its own", nameNode)
            }
            rules.append(rule)
        }
        return rules
    }

    /// One entry; nil when it has no valid name (the other keys are still checked).
    private func decodeModeEntry(_ item: YAMLNode, path: String, profile: Profile, names: inout [String: YAMLNode]) -> ModeRule? {
        guard let f = fields(item, path: path, allowed: Self.modeKeys, required: ["name", "when"]) else { return nil }
        /// Whether a key is absent only because it was misspelled (its unknown-key error is
        /// the cause; a rule about its absence would report the consequence).
        func isMisspelled(_ paths: String...) -> Bool { paths.contains { misspelled[$0] != nil } }

        var name: String?
        var label = "this mode"
        if let n = f["name"], let text = string(n, "name") {
            label = "mode '\(text.clipped)'"
            if !Self.isProfileName(text) {
                error("a mode's 'name' must be 1 to 64 lowercase letters, digits and '-', not starting with '-' (got '\(text.clipped)')", n)
            } else if text == ModeRule.fallbackName {
                error("mode name '\(text)' is reserved for the profile's own settings (in effect when no mode holds); choose another name", n)
            } else if let first = names[text] {
                error("duplicate mode name '\(text)' (first defined at \(position(first)))", n)
            } else {
                names[text] = n
                name = text
            }
        }

        var when = ModeCondition()
        if let n = f["when"], let w = fields(n, path: "\(path).when", allowed: Self.modeConditionKeys) {
            if let m = w["external_power"], let v = boolean(m, "external_power") { when.externalPower = v }
            if let m = w["battery_below"], let v = percent(m, "battery_below", range: 1...100) { when.batteryBelow = v }
            if let m = w["battery_above"], let v = percent(m, "battery_above", range: 0...99) { when.batteryAbove = v }
            if let m = w["activity"], let v = choice(m, "activity", Activity.allCases.map(\.rawValue)) { when.activity = Activity(rawValue: v) }
            if let m = w["moving"], let v = boolean(m, "moving") { when.moving = v }
            if let m = w["active"], let v = decodeSchedule(m) { when.active = v }
            if when.isContradictory, let below = when.batteryBelow, let above = when.batteryAbove, let m = w["battery_below"] {
                error("no capacity is below \(below)% and above \(above)%: 'battery_below' must be at least 'battery_above' + 2", m)
            }
        }

        var rule = ModeRule(name: name ?? "invalid", when: when)
        rule.location = location(item)
        if let n = f["mode"], let v = choice(n, "mode", MonitoringMode.allCases.map(\.rawValue)) { rule.mode = MonitoringMode(rawValue: v) }
        if let n = f["policy"] {
            // The profile's policy with the entry's keys set over it.
            var policy = profile.policy
            decodePolicy(n, into: &policy, path: "\(path).policy")
            checkModeOrder("min_sleep", policy.minSleep, "max_sleep", policy.maxSleep, path: "\(path).policy")
            checkModeOrder("ttff_hot", policy.receiver.ttffHot, "ttff_warm", policy.receiver.ttffWarm, path: "\(path).policy.receiver")
            if nodes["\(path).policy.receiver.ttff_cold"] != nil || nodes["policy.receiver.ttff_cold"] != nil {
                checkModeOrder("ttff_warm", policy.receiver.ttffWarm, "ttff_cold", policy.receiver.ttffCold, path: "\(path).policy.receiver")
            }
            rule.policy = policy
        }
        if let n = f["publish"] {
            if let p = fields(n, path: "\(path).publish", allowed: ["mqtt"], required: ["mqtt"]), let m = p["mqtt"],
               let q = fields(m, path: "\(path).publish.mqtt", allowed: ["locations"], required: ["locations"]), let l = q["locations"],
               let v = choice(l, "locations", MQTTSettings.Locations.allCases.map(\.rawValue)) {
                rule.mqttLocations = MQTTSettings.Locations(rawValue: v)
            }
            if profile.publish.mqtt == nil, nodes["publish.mqtt"] == nil, !isMisspelled("publish", "publish.mqtt") {
                error("\(label) sets 'publish.mqtt.locations', but the profile has no 'publish.mqtt' to change", n)
            }
        }
        let hasCoarse = profile.sources.coarse != nil || nodes["sources.coarse"] != nil || isMisspelled("sources", "sources.coarse")
        let hasGNSS = profile.sources.gnss != nil || nodes["sources.gnss"] != nil || isMisspelled("sources", "sources.gnss")
        if let n = f["coarse"], let v = boolean(n, "coarse") {
            rule.coarse = v
            if v, !hasCoarse {
                error("'coarse: true' needs a coarse source, and the profile has no 'sources.coarse'", n)
            }
        }
        // The sources the entry's monitoring mode runs on (the profile's own mode is checked
        // with the profile's 'mode').
        if let n = f["mode"], let mode = rule.mode {
            switch mode {
            case .continuous, .regions:
                if !hasGNSS {
                    error("\(label) sets 'mode: \(mode.rawValue)', which needs a GNSS source: add 'sources: {gnss: {plugin: gpsd}}'", n)
                }
            case .significantChange:
                if !hasCoarse, rule.coarse != false {
                    error("\(label) sets 'mode: significant-change', which needs a coarse source: add 'sources.coarse' with a plugin command", n)
                }
            }
        }
        let effective = rule.mode ?? (modeIsKnown ? profile.mode : nil)
        if effective == .significantChange, rule.coarse == false, let n = f["coarse"] {
            error("'coarse: false' leaves \(label) nothing to run: mode 'significant-change' takes its positions from the coarse source alone", n)
        }
        return name == nil ? nil : rule
    }

    /// Why no input can ever make the entry's conditions hold (the text, and the condition's
    /// node), or nil.
    private func unreachableReason(_ rule: ModeRule, path: String, profile: Profile) -> (text: String, node: YAMLNode)? {
        func isMisspelled(_ paths: String...) -> Bool { paths.contains { misspelled[$0] != nil } }
        let motionSource = profile.sources.motion != nil || nodes["sources.motion"] != nil || isMisspelled("sources", "sources.motion")
        if rule.when.activity != nil, !motionSource, let n = nodes["\(path).when.activity"] {
            return ("only a motion source senses an activity, and the profile has no 'sources.motion'", n)
        }
        let movementRules = profile.movement.isEnabled || isMisspelled("movement", "movement.motion", "movement.trips", "movement.visits")
        if rule.when.moving != nil, !motionSource, !movementRules, let n = nodes["\(path).when.moving"] {
            return ("nothing decides whether the device moves: add 'sources.motion', or 'movement:' with 'motion', 'trips' or 'visits'", n)
        }
        return nil
    }

    /// Whether running the entry differs from running the profile's own settings.
    private func changesSomething(_ rule: ModeRule, path: String, profile: Profile) -> Bool {
        if let mode = rule.mode, !modeIsKnown || mode != profile.mode { return true }
        if let n = nodes["\(path).policy"], case .mapping(let pairs) = n.kind, !pairs.isEmpty { return true }
        if let locations = rule.mqttLocations, locations != profile.publish.mqtt?.locations { return true }
        return rule.coarse != nil
    }

    /// `20%` or `20`: a whole percentage in `range`.
    func percent(_ node: YAMLNode, _ name: String, range: ClosedRange<Int>) -> Int? {
        guard case .scalar(let text, let style) = node.kind, style != .block, !node.isNull else {
            error("'\(name)' must be a percentage such as 20% (got \(node.kindDescription))", node)
            return nil
        }
        var digits = Substring(text)
        if digits.hasSuffix("%") { digits = digits.dropLast() }
        while digits.hasSuffix(" ") { digits = digits.dropLast() }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits) else {
            error("'\(name)' must be a whole percentage such as 20% (got '\(text.clipped)')", node)
            return nil
        }
        guard range.contains(value) else {
            error("'\(name)' must be between \(range.lowerBound)% and \(range.upperBound)% (got \(text.clipped))", node)
            return nil
        }
        return value
    }

    /// A mode's policy keeps the order rules of the profile's (`checkOrder`), reported only
    /// when the entry sets one of the two keys.
    private func checkModeOrder(_ lowKey: String, _ low: Duration, _ highKey: String, _ high: Duration, path: String) {
        guard low > high, let node = nodes["\(path).\(lowKey)"] ?? nodes["\(path).\(highKey)"] else { return }
        error("'\(lowKey)' (\(low.profileText)) must not be greater than '\(highKey)' (\(high.profileText))", node)
    }

    /// The syntax of a profile's `name` (and a mode's): 1 to 64 of `[a-z0-9-]`, not starting
    /// with '-'.
    static func isProfileName(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64 && !text.hasPrefix("-")
            && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }
}
