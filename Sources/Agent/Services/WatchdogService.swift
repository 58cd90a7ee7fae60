import Foundation
import Logging
import ServiceLifecycle

/// Tells systemd the agent is ready (`READY=1`), keeps `STATUS=` current, and sends
/// `WATCHDOG=1` at half of `WATCHDOG_USEC` — only while every loop has gone round recently.
/// A loop stuck for longer than the watchdog interval stops the pings, and systemd restarts
/// the agent (`WatchdogSec=` in the unit).
struct WatchdogService: Service, CustomStringConvertible {
    let notifier: SystemdNotifier
    let heartbeats: LoopHeartbeats
    let board: SensorBoard
    let logger: Logger

    var description: String { "WatchdogService" }

    func run() async throws {
        notifier.send("READY=1\nSTATUS=\(await statusLine())")
        let interval = notifier.watchdogInterval ?? .seconds(30)
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        var withheld = false
        while await sleepUnlessShuttingDown(for: interval / 2) {
            // A loop is stuck when it has not gone round for a whole watchdog interval.
            let stuck = heartbeats.stale(olderThan: seconds)
            if stuck.isEmpty {
                if notifier.watchdogInterval != nil { notifier.send("WATCHDOG=1\nSTATUS=\(await statusLine())") }
                if withheld { logger.notice("all loops alive again; watchdog pings resume") }
                withheld = false
            } else {
                if !withheld {
                    logger.critical("a loop is stuck; withholding WATCHDOG so systemd restarts the agent", metadata: ["loops": "\(stuck.joined(separator: ","))"])
                }
                withheld = true
                notifier.send("STATUS=stuck: \(stuck.joined(separator: ", "))")
            }
        }
        notifier.send("STOPPING=1")
    }

    private func statusLine() async -> String {
        let gps = await board.gps.state.rawValue
        let hr = await board.heartRate.state.rawValue
        let storage = await board.storageError == nil ? "store ok" : "store failing"
        return "gps \(gps), hr \(hr), \(storage)"
    }
}
