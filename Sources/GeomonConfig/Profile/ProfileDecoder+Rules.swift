import GeomonCore

extension ProfileDecoder {
    /// Rules that span several keys, and lint warnings; run after the whole tree was decoded.
    func checkRules(_ profile: Profile, records: [FenceRecord]) {
        checkModeSources(profile, fenceCount: records.count)
        checkOrder("min_sleep", profile.policy.minSleep, "max_sleep", profile.policy.maxSleep, path: "policy")
        checkOrder("ttff_hot", profile.policy.receiver.ttffHot, "ttff_warm", profile.policy.receiver.ttffWarm, path: "policy.receiver")
        if nodes["policy.receiver.ttff_cold"] != nil {
            checkOrder("ttff_warm", profile.policy.receiver.ttffWarm, "ttff_cold", profile.policy.receiver.ttffCold, path: "policy.receiver")
        }
        checkOrder("backoff", profile.hooks.retry.backoff, "max_backoff", profile.hooks.retry.maxBackoff, path: "hooks.retry")
        checkLatencyBudget(profile)
        checkFences(profile, records: records)
        checkSwappedCoordinates(profile, records)
    }

    /// A fence written with lat and lon swapped usually stays in range: `{lat: 4.37, lon:
    /// 51.99}` among fences in the Netherlands lands in the Gulf of Guinea. Warn when a fence
    /// (inline, or from a file of places: a Home Assistant zone with its numbers swapped) is far
    /// (over 200 km) from the middle of the other fences and its swapped position is at least
    /// ten times nearer to it. The middle is the median of the others; from
    /// `swapMedianOfAll` fences on, the median of all (one fence hardly moves it, and a file of
    /// 10^5 fences is checked in linear time). A fence with `lint: false` is not checked.
    private func checkSwappedCoordinates(_ profile: Profile, _ records: [FenceRecord]) {
        let centers = records.map(\.center)
        guard centers.count >= 2 else { return }
        let all = centers.count >= Self.swapMedianOfAll
            ? Coordinate(latitude: Self.median(centers.map(\.latitude)), longitude: Self.median(centers.map(\.longitude))) : nil
        // One warning per file: a file with its columns swapped throughout gives one.
        var warnedFiles: Set<String> = []
        for (index, record) in records.enumerated() where record.lint {
            let center = centers[index]
            guard abs(center.longitude) <= 90 else { continue }
            if let file = record.geojsonFile, warnedFiles.contains(file) { continue }
            let middle: Coordinate
            if let all {
                middle = all
            } else {
                var others = centers
                others.remove(at: index)
                middle = Coordinate(latitude: Self.median(others.map(\.latitude)), longitude: Self.median(others.map(\.longitude)))
            }
            let distance = Geodesy.haversineMeters(center, middle)
            let swapped = Coordinate(latitude: center.longitude, longitude: center.latitude)
            let swappedDistance = Geodesy.haversineMeters(swapped, middle)
            guard distance > 200_000, swappedDistance * 10 < distance else { continue }
            if let file = record.geojsonFile { warnedFiles.insert(file) }
            diagnostics.append(.warning(
                "fence '\(profile.fences[index].id)' is \(formatNumber((distance / 1000).rounded())) km from the other fences; lat and lon swapped? "
                    + "(lat \(formatNumber(swapped.latitude)), lon \(formatNumber(swapped.longitude)) would be \(formatNumber((swappedDistance / 1000).rounded())) km from them)"
                    + (record.geojsonFile != nil ? "; 'lint: false' on its file entry if it is where it should be" : "; 'lint: false' on the fence if it is where it should be"),
                at: profile.fences[index].location))
        }
    }

    /// From this many fences on, the swapped-coordinates rule measures from the median of all.
    static let swapMedianOfAll = 64

    /// A circle's centre, or the middle of a polygon's or corridor's bounding box.
    static func center(of shape: FenceShape) -> Coordinate {
        switch shape {
        case let .circle(center, _):
            return center
        case .polygons, .corridor:
            let points: [Coordinate]
            switch shape {
            case let .polygons(members): points = members.flatMap(\.shell)
            case let .corridor(lines, _): points = lines.flatMap { $0 }
            case .circle: points = []
            }
            guard let first = points.first else { return Coordinate(latitude: 0, longitude: 0) }
            var minLat = first.latitude, maxLat = first.latitude, minLon = first.longitude, maxLon = first.longitude
            for p in points {
                minLat = min(minLat, p.latitude); maxLat = max(maxLat, p.latitude)
                minLon = min(minLon, p.longitude); maxLon = max(maxLon, p.longitude)
            }
            return Coordinate(latitude: (minLat + maxLat) / 2, longitude: (minLon + maxLon) / 2)
        }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// Whether a key is absent only because it was misspelled (reported as an unknown key, the
    /// cause; the rules that need the key would only report the consequence).
    private func isMisspelled(_ paths: String...) -> Bool {
        paths.contains { misspelled[$0] != nil }
    }

    private func checkModeSources(_ profile: Profile, fenceCount: Int) {
        guard modeIsKnown, let modeNode = nodes["mode"] else { return }
        switch profile.mode {
        case .continuous, .regions:
            if profile.sources.gnss == nil && nodes["sources.gnss"] == nil && !isMisspelled("sources", "sources.gnss") {
                error("mode '\(profile.mode.rawValue)' needs a GNSS source: add 'sources: {gnss: {plugin: gpsd}}'", modeNode)
            }
        case .significantChange:
            if profile.sources.coarse == nil && nodes["sources.coarse"] == nil && !isMisspelled("sources", "sources.coarse") {
                error("mode 'significant-change' needs a coarse source: add 'sources.coarse' with a plugin command", modeNode)
            }
        }
        guard profile.mode == .regions, fenceCount == 0, !isMisspelled("fences") else { return }
        // Missing, `fences:` or `fences: []`; not a list whose entries all had errors.
        if let fencesNode = nodes["fences"] {
            if fencesNode.isNull || (fencesNode.sequenceCount == 0) {
                warning("'fences' is empty: mode 'regions' without fences monitors nothing", fencesNode)
            }
        } else {
            warning("mode 'regions' without fences monitors nothing", modeNode)
        }
    }

    /// `policy.max_latency` acts in regions only, and needs room for a hot start and the
    /// confirming fixes after it (docs/power.md, "Sleeping within a latency budget").
    private func checkLatencyBudget(_ profile: Profile) {
        guard modeIsKnown else { return }
        // A `modes:` entry that runs regions with the profile's budget makes it count.
        let inherited = profile.modes.contains { rule in
            (rule.mode ?? profile.mode) == .regions && (rule.policy?.maxLatency ?? profile.policy.maxLatency) == profile.policy.maxLatency
        }
        checkLatencyBudget(profile.policy, mode: inherited ? .regions : profile.mode, path: "policy", profile: profile)
    }

    /// The same for `policy` (the profile's, or a `modes:` entry's at `path`) in `mode`, when
    /// `path` sets `max_latency` itself.
    func checkLatencyBudget(_ policy: PolicySettings, mode: MonitoringMode, path: String, profile: Profile) {
        guard let node = nodes["\(path).max_latency"] else { return }
        let budget = policy.maxLatency
        guard budget > .zero else { return }
        if mode != .regions {
            warning("'max_latency' has effect in mode 'regions' only (mode is '\(mode.rawValue)')", node)
            return
        }
        checkLatencyRoom(policy, profile: profile, node: node, subject: "'max_latency' (\(budget.profileText))", fix: "use at least that")
    }

    /// A `modes:` entry at `path` that plans with a receiver of its own under the profile's
    /// budget, in `mode`: the room for a sleep with its receiver, at the receiver's key.
    func checkInheritedLatencyRoom(_ policy: PolicySettings, mode: MonitoringMode, path: String, profile: Profile) {
        guard nodes["\(path).max_latency"] == nil, mode == .regions, policy.maxLatency > .zero else { return }
        let restart = profile.restartClass
        guard policy.receiver.restarting(restart).ttffHot != profile.policy.receiver.restarting(restart).ttffHot,
              let node = nodes["\(path).receiver.ttff_\(restart.rawValue)"] ?? nodes["\(path).receiver"] else { return }
        checkLatencyRoom(policy, profile: profile, node: node,
                         subject: "the profile's 'max_latency' (\(policy.maxLatency.profileText)), which this mode keeps,",
                         fix: "set 'max_latency' in this mode's policy to at least that")
    }

    /// Warns at `node` when `policy`'s budget is shorter than the shortest sleep, the start
    /// after it and the confirmation.
    private func checkLatencyRoom(_ policy: PolicySettings, profile: Profile, node: YAMLNode, subject: String, fix: String) {
        // The time to first fix of a wake as the power method's restart class makes it.
        let ttff = policy.receiver.restarting(profile.restartClass).ttffHot
        let restart = profile.restartClass
        let start = restart == .hot ? "ttff_hot" : "ttff_\(restart.rawValue), the power method's restart class"
        let confirming = profile.transitions.confirm - 1
        let byFixes = Duration.seconds(Int64(max(0, confirming)))
        let confirmTime = profile.transitions.confirmTime
        let least = ttff * 2 + max(byFixes, confirmTime)
        if policy.maxLatency < least {
            let confirmation = confirmTime > byFixes
                ? "the \(confirmTime.profileText) a change must be held ('confirm.time')"
                : "\(confirming) more confirming fix\(confirming == 1 ? "" : "es") 1 s apart"
            warning("\(subject) leaves no room for a sleep: the shortest sleep (\(start), \(ttff.profileText)), the \(restart.rawValue) start after it and \(confirmation) need \(least.profileText); \(fix), or 0 to turn the budget off", node)
        }
    }

    private func checkOrder(_ lowKey: String, _ low: Duration, _ highKey: String, _ high: Duration, path: String) {
        guard low > high else { return }
        guard let node = nodes["\(path).\(lowKey)"] ?? nodes["\(path).\(highKey)"] else { return }
        error("'\(lowKey)' (\(low.profileText)) must not be greater than '\(highKey)' (\(high.profileText))", node)
    }

    private func describe(_ location: SourceLocation) -> String {
        location.file == file ? "line \(location.line), column \(location.column)" : location.description
    }

    private func checkFences(_ profile: Profile, records: [FenceRecord]) {
        // Fence numbers, not records: these hold every fence of a large file. Ids are unique
        // here (a duplicate was reported and left out as it was decoded).
        var firstByShape: [Int: Int] = [:]
        var firstByCenter: [Coordinate: Int] = [:]
        firstByShape.reserveCapacity(records.count)
        let gnssAccuracy = profile.sources.gnss?.minAccuracyMeters
        let coarseOnly = profile.sources.gnss == nil && profile.sources.coarse != nil
        let coarseAccuracy = profile.sources.coarse?.expectedAccuracyMeters ?? 500
        // Per GeoJSON file: where its one small-fence warning is, and how many fences it covers.
        var smallInFile: [String: (index: Int, count: Int)] = [:]
        defer {
            for (file, entry) in smallInFile where entry.count > 1 {
                diagnostics[entry.index].message += " (and \(entry.count - 1) more \(entry.count == 2 ? "fence" : "fences") of \(file) like it)"
            }
        }
        for (number, record) in records.enumerated() {
            let fence = profile.fences[number]
            let anchor = fence.location
            guard record.lint else { continue }
            if let first = firstByShape[record.digest].map({ profile.fences[$0] }) {
                diagnostics.append(.warning("fence '\(fence.id)' has the same shape as fence '\(first.id)' (\(first.location.map(describe) ?? "")); one of them is redundant", at: anchor))
                continue
            }
            firstByShape[record.digest] = number
            if let small = record.smallInradius, let gnssAccuracy, !coarseOnly {
                if let file = record.geojsonFile {
                    // A file's small fences: one warning, at the first (a big file has thousands).
                    if smallInFile[file] == nil {
                        smallInFile[file] = (diagnostics.count, 0)
                        diagnostics.append(.warning(smallFenceMessage(fence, kind: small.kind, inradius: small.meters, accuracy: gnssAccuracy,
                                                                      hysteresis: profile.transitions.hysteresisMeters), at: anchor))
                    }
                    smallInFile[file]?.count += 1
                } else {
                    diagnostics.append(.warning(smallFenceMessage(fence, kind: small.kind, inradius: small.meters, accuracy: gnssAccuracy,
                                                                  hysteresis: profile.transitions.hysteresisMeters), at: record.radiusLocation ?? anchor))
                }
            }
            guard case .circle(let center, let radius) = fence.shape else { continue }
            if let first = firstByCenter[center].map({ profile.fences[$0] }) {
                diagnostics.append(.warning("fence '\(fence.id)' is concentric with fence '\(first.id)' (\(first.location.map(describe) ?? ""))", at: anchor))
            } else {
                firstByCenter[center] = number
            }
            let at = record.radiusLocation ?? anchor
            if coarseOnly && radius < coarseAccuracy {
                diagnostics.append(.warning("fence '\(fence.id)' radius \(formatNumber(radius)) m is smaller than the coarse source's accuracy (\(formatNumber(coarseAccuracy)) m) and there is no GNSS source; it will rarely or never trigger", at: at))
            }
        }
    }

    /// Why a fence is too small for the accuracy the profile accepts, with the numbers and
    /// what would do: a fix of accuracy `a` is certainly inside only within `r − (a + h)` of
    /// the fence's middle (`r` its inradius), and that should be at least
    /// `certainCoreMeters` for a fix at `min_accuracy`.
    private func smallFenceMessage(_ fence: Fence, kind: String, inradius r: Double, accuracy a: Double, hysteresis h: Double) -> String {
        let core = Self.certainCoreMeters
        let (what, middle): (String, String)
        let fix: String
        switch kind {
        case "circle":
            (what, middle) = ("its radius, \(formatNumber(r)) m", "its centre")
            fix = "a radius of at least \(formatNumber((a + h + core).rounded(.up))) m"
        case "corridor":
            (what, middle) = ("half its width, \(formatNumber(r)) m", "its centre line")
            fix = "a width of at least \(formatNumber((2 * (a + h + core)).rounded(.up))) m"
        default:
            (what, middle) = ("the radius of its largest inscribed circle, about \(formatNumber(r.rounded())) m", "that circle's centre")
            fix = "a polygon with an inscribed circle of \(formatNumber((a + h + core).rounded(.up))) m"
        }
        let reach = (r - a - h).rounded(.down)
        var message = "fence '\(fence.id)' is too small for the accuracy this profile accepts: a fix is certainly inside only within r − (a + h) of \(middle) "
            + "(r: \(what); a ≤ sources.gnss.min_accuracy, \(formatNumber(a)) m; h: transitions.hysteresis, \(formatNumber(h)) m), "
            + "which at a = \(formatNumber(a)) m is \(reach <= 0 ? "nowhere" : "\(formatNumber(reach)) m"); use \(fix)"
        let accuracy = (r - h - core).rounded(.down)
        if accuracy >= 5 { message += " or min_accuracy: \(formatNumber(accuracy))m" }
        message += " (fixes at min_accuracy then count within \(formatNumber(core)) m)"
        return message
    }
}
