import GeomonCore

extension ProfileDecoder {
    /// Rules that span several keys, and lint warnings; run after the whole tree was decoded.
    func checkRules(_ profile: Profile, records: [FenceRecord]) {
        checkModeSources(profile, fenceCount: records.count)
        checkOrder("min_sleep", profile.policy.minSleep, "max_sleep", profile.policy.maxSleep, path: "policy")
        checkOrder("ttff_hot", profile.policy.receiver.ttffHot, "ttff_warm", profile.policy.receiver.ttffWarm, path: "policy.receiver")
        checkOrder("backoff", profile.hooks.retry.backoff, "max_backoff", profile.hooks.retry.maxBackoff, path: "hooks.retry")
        checkFences(profile, records: records)
    }

    private func checkModeSources(_ profile: Profile, fenceCount: Int) {
        guard modeIsKnown, let modeNode = nodes["mode"] else { return }
        switch profile.mode {
        case .continuous, .regions:
            if profile.sources.gnss == nil && nodes["sources.gnss"] == nil {
                error("mode '\(profile.mode.rawValue)' needs a GNSS source: add 'sources: {gnss: {plugin: gpsd}}'", modeNode)
            }
        case .significantChange:
            if profile.sources.coarse == nil && nodes["sources.coarse"] == nil {
                error("mode 'significant-change' needs a coarse source: add 'sources.coarse' with a plugin command", modeNode)
            }
        }
        if profile.mode == .regions && fenceCount == 0 && nodes["fences"] == nil {
            warning("mode 'regions' without fences monitors nothing", modeNode)
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
        var firstByID: [String: FenceRecord] = [:]
        var firstByShape: [FenceShape: FenceRecord] = [:]
        var firstByCenter: [Coordinate: FenceRecord] = [:]
        let gnssAccuracy = profile.sources.gnss?.minAccuracyMeters
        let coarseOnly = profile.sources.gnss == nil && profile.sources.coarse != nil
        let coarseAccuracy = profile.sources.coarse?.expectedAccuracyMeters ?? 500
        for record in records {
            let fence = record.fence
            if firstByID[fence.id] != nil { continue }
            firstByID[fence.id] = record
            if let first = firstByShape[fence.shape] {
                diagnostics.append(.warning("fence '\(fence.id)' has the same shape as fence '\(first.fence.id)' (\(describe(first.anchor))); one of them is redundant", at: record.anchor))
                continue
            }
            firstByShape[fence.shape] = record
            guard case .circle(let center, let radius) = fence.shape else { continue }
            if let first = firstByCenter[center] {
                diagnostics.append(.warning("fence '\(fence.id)' is concentric with fence '\(first.fence.id)' (\(describe(first.anchor)))", at: record.anchor))
            } else {
                firstByCenter[center] = record
            }
            let at = record.radiusNode.map(location) ?? record.anchor
            if coarseOnly && radius < coarseAccuracy {
                diagnostics.append(.warning("fence '\(fence.id)' radius \(formatNumber(radius)) m is smaller than the coarse source's accuracy (\(formatNumber(coarseAccuracy)) m) and there is no GNSS source; it will rarely or never trigger", at: at))
            } else if let gnssAccuracy, radius < gnssAccuracy {
                diagnostics.append(.warning("fence '\(fence.id)' radius \(formatNumber(radius)) m is smaller than sources.gnss.min_accuracy (\(formatNumber(gnssAccuracy)) m); fixes may never be certain enough to change its state", at: at))
            }
        }
    }
}
