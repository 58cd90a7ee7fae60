import Logging

/// Placeholder until the services are wired.
struct AgentRunner {
    let config: AgentConfig
    let logger: Logger
    func run() async throws {}
}
