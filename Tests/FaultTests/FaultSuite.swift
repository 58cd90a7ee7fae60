import Foundation
import Testing
import TestKit

/// The fault-injection suite: slow (minutes), so off in the default run. `scripts/faults.sh`
/// runs it (`KEEPALIVE_FAULTS=1`). Each scenario asserts that nothing is lost and the agent
/// recovers, and reports its figures.
enum FaultSuite {
    static let enabled = ProcessInfo.processInfo.environment["KEEPALIVE_FAULTS"] == "1"
    static let reason: Comment = "slow; run with scripts/faults.sh (KEEPALIVE_FAULTS=1)"

    /// Prints a figure line and appends it to `$KEEPALIVE_FIGURES_FILE` for the summary.
    static func report(_ scenario: String, _ figures: String) {
        let line = "| \(scenario) | \(figures) |"
        print("FIGURE \(line)")
        guard let path = ProcessInfo.processInfo.environment["KEEPALIVE_FIGURES_FILE"], !path.isEmpty else { return }
        let handle = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }()
        handle?.seekToEndOfFile()
        handle?.write(Data((line + "\n").utf8))
        try? handle?.close()
    }

    static func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
}
