import Bus
import Foundation
import Logging
import ServiceLifecycle
import Store

/// Assembles the agent from its configuration and runs it until SIGTERM or SIGINT, in four steps:
/// open the store, build the services (`AgentServices`), run them as one service group, and let
/// the group shut them down in reverse order.
struct AgentRunner {
    let config: AgentConfig
    let logger: Logger

    func run() async throws {
        // The one clock every part of the agent reads the time of day from (AgentClock).
        let clock = AgentClock()
        let since = clock.now()
        let store = try await openStore(clock: clock)
        let services = try await AgentServices(config: config, store: store, clock: clock, since: since)
        logger.info(
            "keepalive starting",
            metadata: [
                "version": "\(KeepAliveVersion.string)", "device": "\(config.device.id)", "store": "\(config.store.path)",
                "broker": "\(config.mqtt.host):\(config.mqtt.port)", "timezone": "\(config.device.timezone)",
                // What the sleep classifier is told of the sleeper (docs/sleep.md, "Age and gender").
                "person": "\(SleepNight.PersonGiven(config.person.subject(inYear: Calendar(identifier: .gregorian).component(.year, from: since))).rawValue)",
            ])
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.inStartOrder, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.info("keepalive stopped")
    }

    /// The store, or exit 73 (EX_CANTCREAT) when it cannot be opened or created. A file found
    /// damaged and replaced is reported as an event.
    private func openStore(clock: AgentClock) async throws -> Store {
        let store: Store
        do {
            store = try Store(Store.Configuration(
                path: config.store.path, synchronous: config.store.synchronous,
                fullCheckMaxBytes: TestHooks.current.storeFullCheckMaxBytes ?? Store.defaultFullCheckMaxBytes,
                dayTimeZone: AggregateSettings(config: config).timeZone,
                journalFoldAfter: config.store.foldS > 0 ? .seconds(config.store.foldS) : nil, clock: clock,
                keepPublished: config.store.keepPublishedH > 0), logger: logger)
        } catch {
            logger.critical("cannot open the store", metadata: ["path": "\(config.store.path)", "error": "\(error)"])
            throw ExitCodeError.cannotCreate
        }
        if let aside = store.movedAsideCorruptFile {
            logger.error("the store was damaged and has been replaced", metadata: ["kept_as": "\(aside)"])
            _ = try? await store.write(SampleBatch(), messages: [
                EventDraft.make(root: config.topicRoot, kind: "storage", details: [
                    ("problem", "store file damaged at start; replaced by a new one"), ("kept_as", .string(aside)),
                ], at: clock.now())
            ])
        }
        return store
    }
}

/// Exit codes from sysexits.h for failures `run` cannot recover from.
enum ExitCodeError: Error {
    /// EX_CANTCREAT: the store cannot be opened or created.
    case cannotCreate
}
