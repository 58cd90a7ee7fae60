import Bus
import Foundation
import Logging
import ServiceLifecycle
import Store

/// Assembles the agent from its configuration and runs it until SIGTERM or SIGINT.
struct AgentRunner {
    let config: AgentConfig
    let logger: Logger

    func run() async throws {
        // The one clock every part of the agent reads the time of day from (AgentClock).
        let clock = AgentClock()
        let since = clock.now()
        let store: Store
        do {
            store = try Store(Store.Configuration(
                path: config.store.path, synchronous: config.store.synchronous == .normal ? .normal : .full,
                fullCheckMaxBytes: TestHooks.current.storeFullCheckMaxBytes ?? Store.defaultFullCheckMaxBytes,
                dayTimeZone: AggregateSettings(config: config).timeZone,
                journalFoldAfter: config.store.foldS > 0 ? .seconds(config.store.foldS) : nil, clock: clock), logger: logger)
        } catch {
            logger.critical("cannot open the store", metadata: ["path": "\(config.store.path)", "error": "\(error)"])
            throw ExitCodeError.cannotCreate
        }
        if let aside = store.movedAsideCorruptFile {
            logger.error("the store was damaged and has been replaced", metadata: ["kept_as": "\(aside)"])
            _ = try? await store.write(messages: [
                EventDraft.make(root: config.topicRoot, kind: "storage", details: [
                    ("problem", "store file damaged at start; replaced by a new one"), ("kept_as", .string(aside)),
                ], at: clock.now())
            ])
        }

        let statusTopic = "\(config.topicRoot)/status"
        let willSeq = try await store.reserveSeq()
        let options = try MQTTOptionsFactory.options(
            for: config,
            will: MQTTMessage(
                topic: statusTopic, payload: StatusReporter.offlineDocument(seq: willSeq, since: since).bytes, retain: true,
                properties: .json))
        let client = MQTTClient(options: options, logger: Logger(label: "keepalive.mqtt"))
        let drain = OutboxDrain(
            store: store, client: client, maxInflight: config.mqtt.maxInflight,
            useProperties: config.mqtt.protocolVersion == .v5, logger: Logger(label: "keepalive.outbox"))
        let board = SensorBoard()
        let counters = IngestCounters(logger: Logger(label: "keepalive.ingest"))
        let heartbeats = LoopHeartbeats()
        let writer = SampleWriter(
            store: store, drain: drain, board: board, counters: counters, heartbeats: heartbeats, batchMs: config.store.batchMs,
            logger: Logger(label: "keepalive.ingest"))
        let location = LocationPublisher(
            topicRoot: config.topicRoot, mirrorTopic: config.mqtt.owntracksTopic.isEmpty ? nil : config.mqtt.owntracksTopic,
            intervalS: config.schedule.locationIntervalS, deviceID: config.device.id, writer: writer, clock: clock,
            logger: Logger(label: "keepalive.location"))
        var sensors: [ServiceGroupConfiguration.ServiceConfiguration] = []
        let heartRateSource: (any HeartRateTransport)?
        switch config.hr.transport {
        case .udp:
            heartRateSource = UDPLineSource(port: config.hr.udpPort, maxLineBytes: config.hr.maxLineBytes, dropped: counters.heartRateDropped)
        case .mqtt:
            let bridge = MQTTBridgeSource(
                filter: config.hr.topic, client: client, maxLineBytes: config.hr.maxLineBytes, dropped: counters.heartRateDropped)
            // On the network thread itself: when the bridge's messages wait there, TCP and the
            // broker hold the backlog (see MQTTBridgeSource).
            for filter in [bridge.measurementFilter, bridge.statusFilter] {
                client.handleOnNetworkThread(filter) { bridge.deliver($0) }
            }
            heartRateSource = bridge
        case .command:
            heartRateSource = CommandLineSource(
                argv: config.hr.command, maxLineBytes: config.hr.maxLineBytes, restartMaxS: config.hr.reacquireMaxS,
                logger: Logger(label: "keepalive.hr"))
        case .serial:
            heartRateSource = SerialLineSource(
                path: config.hr.serialDevice, baud: config.hr.baud, maxLineBytes: config.hr.maxLineBytes,
                reopenMaxS: config.hr.reacquireMaxS, logger: Logger(label: "keepalive.hr"))
        case .none:
            heartRateSource = nil
        }
        if let heartRateSource {
            sensors.append(.init(service: HeartRateService(
                source: heartRateSource, writer: writer, board: board, counters: counters, clock: clock,
                stallTimeoutS: config.hr.stallTimeoutS, reacquireMaxS: config.hr.reacquireMaxS,
                topicRoot: config.topicRoot, heartbeats: heartbeats,
                logger: Logger(label: "keepalive.hr"))))
        }
        if config.gps.enabled {
            let reader = GPSReader(
                host: config.gps.host, port: config.gps.port, fixTimeout: config.gps.fixTimeoutS,
                backoffMax: config.gps.reconnectMaxS, clock: clock, dropped: counters.gpsDropped, logger: Logger(label: "keepalive.gps"))
            sensors.append(.init(service: GPSService(
                reader: reader, writer: writer, board: board, counters: counters, clock: clock, maxRateHz: config.gps.maxRateHz,
                topicRoot: config.topicRoot, onFirstFix: { await location.firstFix() }, heartbeats: heartbeats,
                logger: Logger(label: "keepalive.gps"))))
        }
        let homeAssistant = HomeAssistantDiscovery(
            config: config, writer: writer, store: store, minimumInterval: .seconds(TestHooks.current.homeAssistantReannounceMinS ?? 60),
            logger: Logger(label: "keepalive.homeassistant"))
        let settings = AggregateSettings(config: config)
        let health = HealthPublisher(
            topicRoot: config.topicRoot, settings: settings, todayIntervalS: config.schedule.todayIntervalS,
            dailyGraceS: config.schedule.dailyGraceS, store: store, writer: writer, clock: clock,
            logger: Logger(label: "keepalive.health"))
        let queries = QueryService(
            config: config, client: client, settings: settings, clock: clock, foldJournal: { await store.foldForReaders() },
            keepSleepEpochs: { try await store.saveSleepEpochs($0) }, logger: Logger(label: "keepalive.query"))
        for filter in queries.filters { client.handleOnNetworkThread(filter) { queries.receive($0) } }
        let gear = GearBook(
            store: store, writer: writer, topicRoot: config.topicRoot, clock: clock, autoCredit: config.workouts.autoCredit,
            logger: Logger(label: "keepalive.gear"), gearChanged: { await homeAssistant.gearChanged($0) })
        let workouts = WorkoutService(
            settings: config.workouts, aggregate: settings, deviceID: config.device.id, topicRoot: config.topicRoot, store: store,
            writer: writer, gear: gear, clock: clock, logger: Logger(label: "keepalive.workouts"),
            heartRateConfigured: config.hr.transport != .none, workoutsChanged: { await health.workoutsChanged(startingAt: $0) })
        let commands = CommandService(
            config: config, client: client, workouts: workouts, gear: gear, store: store, logger: Logger(label: "keepalive.commands"))
        for filter in commands.filters { client.handleOnNetworkThread(filter) { commands.receive($0) } }
        let status = StatusReporter(
            topic: statusTopic, interval: .seconds(config.schedule.statusIntervalS), store: store, board: board,
            counters: counters, drain: drain, writer: writer, client: client, since: since, clock: clock,
            logger: Logger(label: "keepalive.status"))
        let bus = BusService(
            client: client, drain: drain, handlers: homeAssistant.handlers,
            onConnect: { await status.publish(reason: "connect") },
            finalMessage: {
                guard let seq = try? await store.reserveSeq() else { return nil }
                return MQTTMessage(
                    topic: statusTopic, payload: StatusReporter.offlineDocument(seq: seq, since: since).bytes, retain: true,
                    properties: .json)
            },
            heartbeats: heartbeats, logger: Logger(label: "keepalive.bus"))

        logger.info(
            "keepalive starting",
            metadata: [
                "version": "\(KeepAliveVersion.string)", "device": "\(config.device.id)", "store": "\(config.store.path)",
                "broker": "\(config.mqtt.host):\(config.mqtt.port)", "timezone": "\(config.device.timezone)",
            ])
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                // Shut down in reverse: sensors stop, the last samples are committed, status goes
                // offline, and the connection closes last.
                services: [
                    .init(service: bus, successTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: writer),
                    .init(service: status),
                    .init(service: location),
                    .init(service: health),
                    .init(service: queries),
                    .init(service: commands),
                    .init(service: homeAssistant),
                    .init(service: WatchdogService(
                        notifier: SystemdNotifier(), heartbeats: heartbeats, board: board, logger: Logger(label: "keepalive.watchdog"))),
                    .init(
                        service: StoreCheckService(
                            store: store, startAfter: .seconds(TestHooks.current.storeCheckAfterS ?? 60),
                            logger: Logger(label: "keepalive.store")),
                        failureTerminationBehavior: .gracefullyShutdownGroup),
                    .init(service: StoreFileWatchService(
                        store: store, drain: drain, writer: writer, board: board, topicRoot: config.topicRoot, clock: clock,
                        logger: Logger(label: "keepalive.store"))),
                    .init(service: RetentionService(
                        store: store, retentionDays: config.store.retentionDays, maxBytes: config.store.maxBytes, clock: clock,
                        logger: Logger(label: "keepalive.retention"))),
                ] + (config.workouts.enabled ? [.init(service: workouts)] : []) + sensors,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
        logger.info("keepalive stopped")
    }
}

/// A number from the environment: the tests' way to shorten the agent's waits.
/// Exit codes from sysexits.h for failures `run` cannot recover from.
enum ExitCodeError: Error {
    /// EX_CANTCREAT: the store cannot be opened or created.
    case cannotCreate
}
