import ArgumentParser
import Logging

/// `--config` and `--log-level`, shared by the subcommands that read the configuration.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "Path of the configuration file.")
    var config: String = ConfigLoader.defaultPath

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: LogLevelArgument = LogLevelArgument(.info)

    /// Loads the configuration; on a bad one prints the message and exits 78 (EX_CONFIG).
    func loadConfig() throws -> AgentConfig {
        do {
            return try ConfigLoader.load(path: config)
        } catch let error as ConfigError {
            printToStandardError("keepalive: configuration error: \(error)")
            throw ExitCode(ConfigError.exitCode)
        }
    }
}

struct LogLevelArgument: ExpressibleByArgument {
    let level: Logger.Level

    init(_ level: Logger.Level) { self.level = level }

    init?(argument: String) {
        guard let level = Logger.Level(rawValue: argument.lowercased()) else { return nil }
        self.level = level
    }

    var defaultValueDescription: String { level.rawValue }
    static var allValueStrings: [String] { Logger.Level.allCases.map(\.rawValue) }
}
