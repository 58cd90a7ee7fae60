import Foundation

public struct WaitTimeout: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// Bounded waits for a condition that some other process makes true.
public enum Wait {
    /// Checks `condition` every 20 ms until it holds; throws after `timeout` seconds naming what was awaited.
    public static func until(timeout: Double, _ what: @autoclosure () -> String, _ condition: () throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if try condition() { return }
            if Date() >= deadline { throw WaitTimeout(description: "timed out after \(timeout) s waiting for \(what())") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
