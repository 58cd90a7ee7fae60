import Bus
import Foundation
import Logging
import ServiceLifecycle
import Store

/// Announces the agent to Home Assistant by MQTT discovery, and keeps the announcement true:
///
/// - at start, every entity the configuration enables (`DiscoveryCatalog`), retained;
/// - again when HA says it is back (`online` on its birth topic), at most once per
///   `minimumInterval` however often that comes (the births in between are served by one
///   announcement at the end of the interval);
/// - an empty retained config for every retained config of this device on the broker that is
///   not announced any more: an entity a config change turned off (GPS disabled, no bridge,
///   `[homeassistant] enabled = false`) disappears from HA;
/// - a sensor per registered pair of shoes (`ShoeEntity`), from the store at each announcement
///   and on every change `GearBook` reports: added when a pair is added, removed (an empty
///   retained config) when it is retired.
///
/// Every message goes through the outbox like any retained message (durable, in order, at most
/// `max_inflight` at once); the drafts are supersedable, so repeated announcements during a
/// broker outage leave one copy per entity queued, never a pile.
actor HomeAssistantDiscovery: Service, CustomStringConvertible {
    private let document: DiscoveryDocument
    /// Topic → config payload, for every announced entity (empty when disabled).
    private let configs: [(topic: String, payload: [UInt8])]
    private let announcedTopics: Set<String>
    private let birthTopic: String?
    private let writer: SampleWriter
    /// Where the registered shoes are read from (nil: no shoe sensors).
    private let store: Store?
    private let minimumInterval: Duration
    private let logger: Logger
    private let births: AsyncStream<Void>
    private let birthSignal: AsyncStream<Void>.Continuation
    private var birthsSinceAnnouncement = 0
    private var lastAnnouncement: ContinuousClock.Instant?

    static let retryInterval: Duration = .seconds(30)

    init(config: AgentConfig, writer: SampleWriter, store: Store? = nil, minimumInterval: Duration = .seconds(60), logger: Logger) {
        let settings = config.homeAssistant
        let document = DiscoveryDocument(
            discoveryPrefix: settings.discoveryPrefix, topicRoot: config.topicRoot, deviceID: config.device.id,
            version: KeepAliveVersion.string)
        self.document = document
        configs = DiscoveryCatalog.entities(for: config).map { (document.topic(for: $0), document.payload(for: $0).bytes) }
        announcedTopics = Set(configs.map(\.topic))
        birthTopic = settings.enabled ? settings.birthTopic : nil
        self.writer = writer
        self.store = store
        self.minimumInterval = minimumInterval
        self.logger = logger
        // Births waiting for the interval to pass are one announcement: keep only the newest.
        (births, birthSignal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    nonisolated var description: String { "HomeAssistantDiscovery" }

    /// What the bus delivers here: HA's birth message, and this device's retained configs (even
    /// when disabled, to remove what an earlier configuration announced).
    nonisolated var handlers: [(filter: String, handle: BusService.MessageHandler)] {
        var handlers: [(filter: String, handle: BusService.MessageHandler)] = [
            (filter: document.configFilter, handle: { @Sendable message in await self.receivedConfig(message) })
        ]
        if let birthTopic {
            handlers.append((filter: birthTopic, handle: { @Sendable message in await self.receivedBirth(message) }))
        }
        return handlers
    }

    func run() async throws {
        guard !configs.isEmpty else {
            logger.info("Home Assistant discovery is off; removing this device's entities from Home Assistant where the broker still holds them")
            while await sleepUnlessShuttingDown(for: .seconds(3600)) {}
            return
        }
        await announce(reason: "start")
        await cancelWhenGracefulShutdown {
            for await _ in self.births {
                // A birth that came while the last announcement was waiting its turn is answered.
                guard await self.birthsSinceAnnouncement > 0 else { continue }
                let wait = await self.timeUntilAllowed()
                if wait > .zero, !(await sleepUnlessShuttingDown(for: wait)) { return }
                await self.announce(reason: "Home Assistant online")
            }
        }
    }

    private func timeUntilAllowed() -> Duration {
        guard let lastAnnouncement else { return .zero }
        return max(.zero, lastAnnouncement + minimumInterval - .now)
    }

    /// Queues every config, retrying while the store cannot take them (disk full).
    private func announce(reason: String) async {
        var drafts = configs.map { config in
            OutboxDraft(topic: config.topic, retain: true, supersedable: true) { _ in config.payload }
        }
        drafts += await shoeConfigs().map { config in
            OutboxDraft(topic: config.topic, retain: true, supersedable: true) { _ in config.payload }
        }
        // Births from here on are answered by the next announcement.
        let births = birthsSinceAnnouncement
        birthsSinceAnnouncement = 0
        while true {
            do {
                try await writer.publish(drafts)
                break
            } catch {
                logger.warning("cannot queue the Home Assistant discovery; trying again", metadata: ["error": "\(error)"])
                guard await sleepUnlessShuttingDown(for: Self.retryInterval) else { return }
            }
        }
        lastAnnouncement = .now
        logger.info(
            "announced the device to Home Assistant",
            metadata: ["entities": "\(configs.count)", "reason": "\(reason)", "births_since_last": "\(births)"])
    }

    // MARK: - Shoes

    /// A pair was added, changed or retired (`GearBook`): its sensor announced, or removed.
    func gearChanged(_ gear: StoredGear) async {
        guard !configs.isEmpty else { return }
        let entity = ShoeEntity.entity(for: gear)
        let topic = document.topic(for: entity)
        let payload = gear.retired ? [] : document.payload(for: entity).bytes
        do {
            try await writer.publish([OutboxDraft(topic: topic, retain: true, supersedable: true) { _ in payload }])
            if gear.retired { logger.info("removing a retired pair of shoes from Home Assistant", metadata: ["gear": "\(gear.id)"]) }
        } catch {
            // The next announcement (start, HA's birth) puts it right.
            logger.warning("cannot queue a pair of shoes' Home Assistant config", metadata: ["gear": "\(gear.id)", "error": "\(error)"])
        }
    }

    /// Topic and payload for every pair that is not retired; none when they cannot be read (logged).
    private func shoeConfigs() async -> [(topic: String, payload: [UInt8])] {
        guard let store, !configs.isEmpty else { return [] }
        do {
            return try await store.readStored { try $0.allGear() }.filter { !$0.retired }.map { gear in
                let entity = ShoeEntity.entity(for: gear)
                return (document.topic(for: entity), document.payload(for: entity).bytes)
            }
        } catch {
            logger.warning("cannot read the shoes for Home Assistant", metadata: ["error": "\(error)"])
            return []
        }
    }

    private func shoeID(topic: String) -> String? {
        let levels = topic.split(separator: "/")
        guard levels.count >= 2 else { return nil }
        return ShoeEntity.gearID(objectID: String(levels[levels.count - 2]))
    }

    /// Whether a shoe's retained config is one to keep: the pair is registered and not retired
    /// (and discovery is on). When the store cannot say, it is kept: a wrong removal would make HA
    /// forget the entity's settings.
    private func isRegistered(shoe id: String) async -> Bool {
        guard let store, !configs.isEmpty else { return false }
        do {
            guard let gear = try await store.readStored({ try $0.gear(id: id) }) else { return false }
            return !gear.retired
        } catch {
            return true
        }
    }

    private func receivedBirth(_ message: MQTTIncomingMessage) {
        // A retained birth is an old one (HA's own is not retained): the start announcement covers it.
        guard !message.retain, message.payload.elementsEqual("online".utf8) else { return }
        birthsSinceAnnouncement += 1
        birthSignal.yield()
    }

    /// A retained config of this device that is not announced any more: cleared with an empty
    /// retained message, which is how HA is told to remove an entity.
    private func receivedConfig(_ message: MQTTIncomingMessage) async {
        guard message.retain, !message.payload.isEmpty, !announcedTopics.contains(message.topic) else { return }
        if let id = shoeID(topic: message.topic), await isRegistered(shoe: id) { return }
        do {
            try await writer.publish([
                OutboxDraft(topic: message.topic, retain: true, contentType: nil, supersedable: true) { _ in [] }
            ])
            logger.info("removing an entity this configuration no longer announces from Home Assistant", metadata: ["topic": "\(message.topic)"])
        } catch {
            // The broker offers the retained config again on the next connection.
            logger.warning("cannot queue the removal of a Home Assistant entity", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
        }
    }
}
