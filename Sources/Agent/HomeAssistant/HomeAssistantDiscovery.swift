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
///   `[homeassistant] enabled = false`) disappears from HA.
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
    private let minimumInterval: Duration
    private let logger: Logger
    private let births: AsyncStream<Void>
    private let birthSignal: AsyncStream<Void>.Continuation
    private var birthsSinceAnnouncement = 0
    private var lastAnnouncement: ContinuousClock.Instant?

    static let retryInterval: Duration = .seconds(30)

    init(config: AgentConfig, writer: SampleWriter, minimumInterval: Duration = .seconds(60), logger: Logger) {
        let settings = config.homeAssistant
        let document = DiscoveryDocument(
            discoveryPrefix: settings.discoveryPrefix, topicRoot: config.topicRoot, deviceID: config.device.id,
            version: KeepAliveVersion.string)
        self.document = document
        configs = DiscoveryCatalog.entities(for: config).map { (document.topic(for: $0), document.payload(for: $0).bytes) }
        announcedTopics = Set(configs.map(\.topic))
        birthTopic = settings.enabled ? settings.birthTopic : nil
        self.writer = writer
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
        let drafts = configs.map { config in
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
