import ArgumentParser

/// `keepalive`: the edge agent and its tools. The executable adds `archive` (Sources/Archive),
/// which lives in a target of its own.
public struct KeepAliveCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "keepalive",
        abstract: "KeepAlive edge agent: GPS and heart rate from a Raspberry Pi, stored locally, published over MQTT.",
        version: KeepAliveVersion.string,
        subcommands: [
            RunCommand.self, QueryCommand.self, ExportCommand.self, WorkoutsCommand.self, WorkoutCommand.self, GearCommand.self,
            CheckConfigCommand.self,
        ])

    public init() {}
}
