import Foundation
import Synchronization

/// Requests allowed at `ratePerS` on average, `burst` at once.
struct TokenBucket: Sendable {
    let ratePerS: Double
    let burst: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant

    init(ratePerS: Double, burst: Int, now: ContinuousClock.Instant = .now) {
        self.ratePerS = ratePerS
        self.burst = Double(max(burst, 1))
        tokens = self.burst
        last = now
    }

    mutating func take(now: ContinuousClock.Instant = .now) -> Bool {
        let elapsed = now - last
        last = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + seconds * ratePerS)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Returns the token of a request refused after it took one (no room to queue it).
    mutating func giveBack() {
        tokens = min(burst, tokens + 1)
    }
}

/// A token bucket shared by the MQTT network thread and tasks (queries, commands).
final class LockedTokenBucket: Sendable {
    private let bucket: Mutex<TokenBucket>
    init(_ bucket: TokenBucket) { self.bucket = Mutex(bucket) }
    func take() -> Bool { bucket.withLock { $0.take() } }
    func giveBack() { bucket.withLock { $0.giveBack() } }
}
