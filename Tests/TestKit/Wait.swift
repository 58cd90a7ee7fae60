import Foundation

public struct WaitTimeout: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// Bounded waits for a condition that some other process makes true. Deadlines are measured on
/// the monotonic clock: a test that steps the wall clock does not stretch or cut them.
public enum Wait {
    /// Checks `condition` every 20 ms until it holds; throws after `timeout` seconds naming what was awaited.
    public static func until(timeout: Double, _ what: @autoclosure () -> String, _ condition: () throws -> Bool) async throws {
        try await until(timeout: timeout, what(), condition) { try await Task.sleep(for: .milliseconds(20)) }
    }

    /// Checks `condition`, running `refresh` (which waits for or fetches what the condition looks
    /// at: asks the agent again, reads a file) between checks, until it holds; throws after
    /// `timeout` seconds naming what was awaited.
    public static func until(
        timeout: Double, _ what: @autoclosure () -> String, _ condition: () throws -> Bool, refresh: () async throws -> Void
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while true {
            if try condition() { return }
            if ContinuousClock.now >= deadline { throw WaitTimeout(description: "timed out after \(timeout) s waiting for \(what())") }
            try await refresh()
        }
    }
}
