import Bus
import Foundation
import Logging
import ServiceLifecycle
import Store

/// Every service of a running agent, built from the configuration around one store, one MQTT
/// client and one clock, and wired to each other (who hands samples to whom, who is told of what).
/// `AgentRunner` runs them as one service group.
struct AgentServices {
    let bus: BusService
    let writer: SampleWriter
    let status: StatusReporter
    let location: LocationPublisher
    let health: HealthPublisher
    let queries: QueryService
    let commands: CommandService
    let homeAssistant: HomeAssistantDiscovery
    let workouts: WorkoutService?
    let maintenance: [ServiceGroupConfiguration.ServiceConfiguration]
    let sensors: [any Service]

    init(config: AgentConfig, store: Store, clock: AgentClock, since: Date) async throws {
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
        let ingest = SensorWiring(writer: writer, board: board, counters: counters, heartbeats: heartbeats, clock: clock)
        sensors = Self.sensors(config: config, client: client, ingest: ingest, location: location)

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
            keepSleepEpochs: { try await store.saveSleepEpochs($0) }, keepSleepNight: { try await store.saveSleepNight($0) },
            keepDayFold: { try await store.saveDayFold($0) },
            logger: Logger(label: "keepalive.query"))
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
        bus = BusService(
            client: client, drain: drain, handlers: homeAssistant.handlers,
            onConnect: { await status.publish(reason: "connect") },
            finalMessage: {
                guard let seq = try? await store.reserveSeq() else { return nil }
                return MQTTMessage(
                    topic: statusTopic, payload: StatusReporter.offlineDocument(seq: seq, since: since).bytes, retain: true,
                    properties: .json)
            },
            heartbeats: heartbeats, logger: Logger(label: "keepalive.bus"))
        maintenance = Self.maintenance(config: config, store: store, drain: drain, ingest: ingest)
        self.writer = writer
        self.status = status
        self.location = location
        self.health = health
        self.queries = queries
        self.commands = commands
        self.homeAssistant = homeAssistant
        self.workouts = config.workouts.enabled ? workouts : nil
    }

    /// The group's order. It shuts down in reverse: sensors stop, the last samples are committed,
    /// status goes offline, and the connection closes last. The bus ending on its own ends the
    /// agent.
    var inStartOrder: [ServiceGroupConfiguration.ServiceConfiguration] {
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: bus, successTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: writer),
            .init(service: status),
            .init(service: location),
            .init(service: health),
            .init(service: queries),
            .init(service: commands),
            .init(service: homeAssistant),
        ]
        services += maintenance
        if let workouts { services.append(.init(service: workouts)) }
        return services + sensors.map { .init(service: $0) }
    }

    /// What keeps the agent and its store healthy: the systemd watchdog, the store's integrity
    /// check (a store that fails it ends the agent), the watch on its file, retention.
    private static func maintenance(
        config: AgentConfig, store: Store, drain: OutboxDrain, ingest: SensorWiring
    ) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        [
            .init(service: WatchdogService(
                notifier: SystemdNotifier(), heartbeats: ingest.heartbeats, board: ingest.board, logger: Logger(label: "keepalive.watchdog"))),
            .init(
                service: StoreCheckService(
                    store: store, startAfter: .seconds(TestHooks.current.storeCheckAfterS ?? 60), logger: Logger(label: "keepalive.store")),
                failureTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: StoreFileWatchService(
                store: store, drain: drain, writer: ingest.writer, board: ingest.board, topicRoot: config.topicRoot, clock: ingest.clock,
                logger: Logger(label: "keepalive.store"))),
            .init(service: RetentionService(
                store: store, retentionDays: config.store.retentionDays, maxBytes: config.store.maxBytes, clock: ingest.clock,
                logger: Logger(label: "keepalive.retention"),
                keepPublished: config.store.keepPublishedH > 0 ? (config.store.keepPublishedH, config.store.keepPublishedMax) : nil)),
        ]
    }
}
