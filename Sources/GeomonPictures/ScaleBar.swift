/// A scale bar length that is a round number of metres or kilometres (1, 2 or 5 × 10^k).
enum ScaleBar {
    /// The longest round length not exceeding `maxPixels` at `metersPerPixel`.
    static func length(metersPerPixel: Double, maxPixels: Double) -> (meters: Double, text: String) {
        let limit = max(metersPerPixel * maxPixels, 1e-3)
        var best = 1.0
        var magnitude = 1e-3
        while magnitude <= 1e8 {
            for m in [1.0, 2.0, 5.0] where m * magnitude <= limit {
                best = m * magnitude
            }
            magnitude *= 10
        }
        return (best, text(meters: best))
    }

    static func text(meters: Double) -> String {
        if meters >= 1000 { return "\(SVGWriter.n(meters / 1000)) km" }
        if meters >= 1 { return "\(SVGWriter.n(meters)) m" }
        return "\(SVGWriter.n(meters * 100)) cm"
    }
}
