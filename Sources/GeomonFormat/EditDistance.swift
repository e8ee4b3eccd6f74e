/// "Did you mean" suggestions by Levenshtein distance.
public enum EditDistance {
    public static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var previous = Array(0...y.count)
        var current = previous
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }

    /// The closest candidate, when it is close enough to be a likely typo.
    public static func suggestion(for word: String, among candidates: [String]) -> String? {
        let lowered = word.lowercased()
        var best: (String, Int)?
        for candidate in candidates {
            let d = distance(lowered, candidate)
            if d < (best?.1 ?? Int.max) { best = (candidate, d) }
        }
        guard let best else { return nil }
        let limit = max(2, word.unicodeScalars.count / 3)
        return best.1 <= limit ? best.0 : nil
    }
}
