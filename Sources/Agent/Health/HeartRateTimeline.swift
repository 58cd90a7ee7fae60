/// Valid heart-rate samples of a day in time order, for finding the one nearest a fix.
struct HeartRateTimeline: Sendable {
    private(set) var times: [Int64] = []
    private(set) var bpm: [Int] = []

    mutating func append(timeMs: Int64, bpm value: Int) {
        times.append(timeMs)
        bpm.append(value)
    }

    func nearest(to timeMs: Int64, withinMs limit: Int64) -> Int? {
        let low = times.lowerBound(of: timeMs)
        var best: Int?
        var bestDistance = Int64.max
        for index in [low - 1, low] where times.indices.contains(index) {
            let distance = abs(times[index] - timeMs)
            if distance <= limit && distance < bestDistance {
                best = bpm[index]
                bestDistance = distance
            }
        }
        return best
    }
}
