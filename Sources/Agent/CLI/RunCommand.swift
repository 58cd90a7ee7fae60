import ArgumentParser
import Logging

/// `keepalive run`: the agent itself, until SIGTERM/SIGINT.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the agent: read the sensors, store, publish, answer queries.")

    @OptionGroup var options: CommonOptions

    func run() async throws {
        HeapSettings.apply()
        let config = try options.loadConfig()
        AgentLogging.bootstrap(level: options.logLevel.level)
        let logger = Logger(label: "keepalive")
        for warning in SecretAudit.warnings(for: config) { logger.warning("a secret is readable by others", metadata: ["problem": "\(warning)"]) }
        do {
            try await AgentRunner(config: config, logger: logger).run()
        } catch ExitCodeError.cannotCreate {
            throw ExitCode(73)  // EX_CANTCREAT
        } catch is StoreDamagedError {
            throw ExitCode(75)  // EX_TEMPFAIL: the next start replaces the damaged file
        }
    }
}
