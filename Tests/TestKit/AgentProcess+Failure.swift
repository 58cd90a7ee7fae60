import Foundation

/// A test step's error with what the agent and gpsd were doing when it happened.
public struct ExplainedFailure: Error, CustomStringConvertible {
    public let description: String
}

extension AgentProcess {
    /// `body`; if it throws, its error comes back with gpsfake's last output (when given) and the
    /// agent's last 60 log lines, the first things to read when a wait through gpsd times out.
    public func explainingFailure<T>(gps: GPSFake? = nil, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            let gpsd = gps.map { "\ngpsfake running \($0.process.isRunning): \($0.process.text.suffix(1500))" } ?? ""
            throw ExplainedFailure(
                description: "\(error)\(gpsd)\nthe agent logged:\n\(log.split(separator: "\n").suffix(60).joined(separator: "\n"))")
        }
    }
}
