/// Thins a polyline by distance on screen, never by count: a point is kept when it lies at
/// least `minSpacing` pixels from the previously kept one. The first and last points and every
/// index in `mustKeep` (state changes, event fixes) are always kept.
///
/// The output is bounded by the drawn length in pixels divided by `minSpacing`, plus the
/// must-keep points, whatever the sampling rate of the input.
enum TrackThinner {
    static func thin(_ points: [ScreenPoint], minSpacing: Double, mustKeep: (Int) -> Bool = { _ in false }) -> [Int] {
        guard points.count > 2 else { return Array(points.indices) }
        let threshold = minSpacing * minSpacing
        var kept: [Int] = [0]
        var last = points[0]
        for i in 1..<(points.count - 1) {
            let p = points[i]
            let dx = p.x - last.x, dy = p.y - last.y
            if dx * dx + dy * dy >= threshold || mustKeep(i) {
                kept.append(i)
                last = p
            }
        }
        kept.append(points.count - 1)
        return kept
    }
}
