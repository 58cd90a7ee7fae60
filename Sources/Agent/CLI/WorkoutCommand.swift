import ArgumentParser

/// `keepalive workout start|stop`: a workout by hand, through the running agent (`cmd/workout`).
struct WorkoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workout",
        abstract: "Start or stop a workout by hand (the running agent records it).",
        discussion: """
            A workout started here is kept whatever its length; the agent's own detection finds nothing inside it. \
            Prints the agent's reply; exit status 1 when it refused (e.g. stop with nothing started).
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable { case start, stop }

    @OptionGroup var options: CommonOptions
    @Argument(help: "start or stop.") var action: Action
    @Option(help: "The sport: run, walk, cycle… (start: default run; stop: overrides the start's).") var sport: String?

    func run() throws {
        let config = try options.loadConfig()
        var body: [(String, JSONValue)] = [("op", .string(action.rawValue))]
        if let sport { body.append(("sport", .string(sport))) }
        try AgentCommandClient.finish(try AgentCommandClient.send(config: config, command: "workout", body: .object(body)))
    }
}
