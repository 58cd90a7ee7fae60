/// RMSSD: the root mean square of successive differences between RR intervals, in ms.
///
/// Successive means adjacent beats as the strap reported them: within a notification, and
/// across notifications while they keep coming (no gap longer than the dropout limit, no
/// invalid notification in between). RR intervals outside 300–2000 ms (200–30 bpm) are
/// artefacts and break the chain instead of entering it.
struct RMSSDAccumulator: Sendable, Codable {
    static let plausibleMs: ClosedRange<Double> = 300...2000

    private var previousMs: Double?
    private var lastTimeMs: Int64?
    private var sumOfSquares = 0.0
    private(set) var differences = 0

    mutating func add(rr1024: [Int], timeMs: Int64, gapLimitMs: Int64) {
        if let lastTimeMs, timeMs - lastTimeMs > gapLimitMs { previousMs = nil }
        lastTimeMs = timeMs
        for raw in rr1024 {
            let ms = Double(raw) * 1000 / 1024
            guard Self.plausibleMs.contains(ms) else {
                previousMs = nil
                continue
            }
            if let previousMs {
                sumOfSquares += (ms - previousMs) * (ms - previousMs)
                differences += 1
            }
            previousMs = ms
        }
    }

    mutating func breakChain() { previousMs = nil }

    var rmssdMs: Double? { differences > 0 ? (sumOfSquares / Double(differences)).squareRoot() : nil }
}
