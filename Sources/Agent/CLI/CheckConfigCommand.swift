import ArgumentParser

/// `keepalive check-config [PATH]`: validate a configuration and print what it resolves to.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check a configuration file; exit 78 naming the first bad key.")

    @Argument(help: "Path of the configuration file.")
    var path: String = ConfigLoader.defaultPath

    func run() throws {
        let config: AgentConfig
        do {
            config = try ConfigLoader.load(path: path)
        } catch let error as ConfigError {
            printToStandardError("keepalive: configuration error: \(error)")
            throw ExitCode(ConfigError.exitCode)
        }
        for warning in SecretAudit.warnings(for: config) { printToStandardError("keepalive: warning: \(warning)") }
        print("\(path): ok")
        print(ConfigSummary(config).text)
    }
}
