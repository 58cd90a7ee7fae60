import Agent
import Archive
import ArgumentParser

@main
struct KeepAliveMain {
    static func main() async {
        // The explicit `nil` picks AsyncParsableCommand's async entry point over the sync one.
        await KeepAliveRoot.main(nil)
    }
}

/// The agent's command with `archive` added: the archive is a target of its own (Sources/Archive)
/// that uses the agent's, so the agent's command cannot name it.
struct KeepAliveRoot: AsyncParsableCommand {
    static let configuration: CommandConfiguration = {
        var configuration = KeepAliveCommand.configuration
        configuration.subcommands.append(ArchiveCommand.self)
        return configuration
    }()
}
