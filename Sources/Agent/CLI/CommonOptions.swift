import ArgumentParser
import Logging

/// `--config` and `--log-level`, shared by the subcommands that read the configuration.
package struct CommonOptions: ParsableArguments {
    package init() {}

    @Option(name: .long, help: "Path of the configuration file.")
    var config: String = ConfigLoader.defaultPath

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    package var logLevel: LogLevelArgument = LogLevelArgument(.info)

    /// Loads the configuration; on a bad one prints the message and exits 78 (EX_CONFIG).
    package func loadConfig() throws -> AgentConfig {
        do {
            return try ConfigLoader.load(path: config)
        } catch let error as ConfigError {
            printToStandardError("keepalive: configuration error: \(error)")
            throw ExitCode(ConfigError.exitCode)
        }
    }
}

package struct LogLevelArgument: ExpressibleByArgument {
    package let level: Logger.Level

    init(_ level: Logger.Level) { self.level = level }

    package init?(argument: String) {
        guard let level = Logger.Level(rawValue: argument.lowercased()) else { return nil }
        self.level = level
    }

    package var defaultValueDescription: String { level.rawValue }
    package static var allValueStrings: [String] { Logger.Level.allCases.map(\.rawValue) }
}
