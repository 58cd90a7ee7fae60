import Foundation
import Synchronization

/// When each of the agent's loops last went round, for the systemd watchdog: it is fed only
/// while every registered loop is alive, so a wedged loop gets the agent restarted.
final class LoopHeartbeats: Sendable {
    /// Per loop: when it last went round (uptime ns).
    private let last = Mutex<[String: UInt64]>([:])

    /// Registers a loop (alive now) or records that it went round.
    func beat(_ loop: String) {
        let now = DispatchTime.now().uptimeNanoseconds
        last.withLock { $0[loop] = now }
    }

    /// The loops that have not gone round for `seconds`.
    func stale(olderThan seconds: Double) -> [String] {
        let now = DispatchTime.now().uptimeNanoseconds
        let limit = UInt64(seconds * 1e9)
        // A beat recorded after `now` was read is newer than `now`: alive, not an underflow.
        return last.withLock { $0.filter { $0.value < now && now - $0.value > limit }.map(\.key).sorted() }
    }
}
