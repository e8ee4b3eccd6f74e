/// Greedy label placement: a label is drawn only where it overlaps no label or reserved area
/// already placed. Callers offer labels in priority order, so what matters most wins.
struct LabelPlacer {
    struct Box {
        var x0, y0, x1, y1: Double
        func overlaps(_ o: Box) -> Bool { x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1 }
    }

    private(set) var placed: [Box] = []
    let bounds: Box

    init(bounds: Box) {
        self.bounds = bounds
    }

    mutating func reserve(_ box: Box) {
        placed.append(box)
    }

    /// Tries each box in turn; places and returns the index of the first that fits.
    mutating func place(_ candidates: [Box]) -> Int? {
        for (i, box) in candidates.enumerated() {
            guard box.x0 >= bounds.x0, box.x1 <= bounds.x1, box.y0 >= bounds.y0, box.y1 <= bounds.y1 else { continue }
            if !placed.contains(where: { $0.overlaps(box) }) {
                placed.append(box)
                return i
            }
        }
        return nil
    }
}
