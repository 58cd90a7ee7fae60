import ArgumentParser
import Foundation

/// `keepalive query DATE`: prints exactly the reply a `selection/date` request gets, read from
/// the local store (it opens the file read-only, so it works while the agent runs).
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the per-date reply for DATE (YYYY-MM-DD) from the local store.",
        discussion: "Exit status: 0 for an ok reply, 1 for an error reply (printed all the same).")

    @OptionGroup var options: CommonOptions
    @Argument(help: "The local date, YYYY-MM-DD.") var date: String
    @Option(help: "Reply format.") var format: QueryRequest.Format = .json
    @Option(parsing: .upToNextOption, help: "Parts of the reply (default: health location).")
    var include: [QueryRequest.Part] = [.health, .location]
    @Option(help: "Track detail: one point per 5 minutes, or every stored fix.") var track: QueryRequest.TrackDetail = .fiveMinutes

    func run() throws {
        AgentLogging.bootstrap(level: options.logLevel.level)
        let config = try options.loadConfig()
        let engine = QueryEngine(
            storePath: config.store.path, settings: AggregateSettings(config: config), maxReplyBytes: config.query.maxReplyBytes,
            deviceID: config.device.id)
        engine.carriesDays = false
        let request = QueryRequest(date: date, include: Set(include), track: track, format: format)
        let reply = engine.answer(request, now: AgentClock.commandLine(storePath: config.store.path).now())
        FileHandle.standardOutput.write(Data(reply.body + [0x0A]))
        if reply.status != 200 { throw ExitCode(1) }
    }
}

extension QueryRequest.Format: ExpressibleByArgument {}
extension QueryRequest.Part: ExpressibleByArgument {}
extension QueryRequest.TrackDetail: ExpressibleByArgument {}
