import Agent
import ArgumentParser
import CLibPQ
import Foundation
import Logging
import Supervision
import Synchronization

/// `keepalive archive`: the fleet's archiver (docs/fleet.md). Same binary and config format as
/// the agent: `[mqtt]` is the cluster (account `archive`), `[archive]` the PostgreSQL database.
public struct ArchiveCommand: AsyncParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "archive",
        abstract: "Archive every device's messages from the fleet's MQTT cluster into PostgreSQL, exactly once per (device, seq).",
        discussion: """
            Runs until SIGTERM or SIGINT. Give each archiver its own [mqtt] client_id; any number may run \
            at once against the same database. Answers per-date queries on <prefix>/archive/<device>/selection/date.
            """)

    @OptionGroup var options: CommonOptions

    public func run() async throws {
        AgentLogging.bootstrap(level: options.logLevel.level)
        let config = try options.loadConfig()
        let logger = Logger(label: "keepalive.archive")
        // libpq is loaded on first use (Sources/CLibPQ): without it there is nothing to archive to.
        if let problem = keepalive_libpq_problem() {
            logger.critical("libpq could not be loaded: install libpq5", metadata: ["error": "\(String(cString: problem))"])
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
        let service = try ArchiveService(config: config, logger: logger, now: SystemClock().now())
        service.start()
        logger.info("archive started", metadata: ["broker": "\(config.mqtt.host):\(config.mqtt.port)", "client_id": "\(config.mqtt.clientID)"])
        let status = Task { await service.publishStatusForever() }
        let answering = Task { await service.answerLock.holdForever() }
        await Self.waitForTermination()
        logger.info("archive stopping")
        status.cancel()
        answering.cancel()
        service.stop()
    }

    /// Returns on the first SIGTERM or SIGINT.
    private static func waitForTermination() async {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            let sources = [SIGTERM, SIGINT].map { DispatchSource.makeSignalSource(signal: $0, queue: .global()) }
            for source in sources {
                source.setEventHandler {
                    if once.claim() { continuation.resume() }
                }
                source.resume()
            }
            SignalSources.keep(sources)
        }
    }
}

/// True for the first caller only.
private final class OnceFlag: Sendable {
    private let claimed = Atomic(false)
    func claim() -> Bool { !claimed.exchange(true, ordering: .acquiringAndReleasing) }
}

/// Keeps the signal sources alive for the life of the process.
private enum SignalSources {
    nonisolated(unsafe) private static var kept: [any DispatchSourceSignal] = []
    static func keep(_ sources: [any DispatchSourceSignal]) { kept = sources }
}
