import Bus
import Foundation
import Logging
import ServiceLifecycle
import Supervision

/// Runs the MQTT connection for the agent's lifetime: starts it, feeds its events to the outbox
/// drain and to whoever subscribed, and on shutdown publishes the offline status and disconnects.
final class BusService: Service, Sendable, CustomStringConvertible {
    typealias MessageHandler = @Sendable (MQTTIncomingMessage) async -> Void

    let client: MQTTClient
    private let drain: OutboxDrain
    private let onConnect: @Sendable () async -> Void
    private let finalMessage: @Sendable () async -> MQTTMessage?
    private let handlers: [(filter: String, handle: MessageHandler)]
    private let logger: Logger
    private let heartbeats: LoopHeartbeats

    init(
        client: MQTTClient, drain: OutboxDrain, handlers: [(filter: String, handle: MessageHandler)],
        onConnect: @escaping @Sendable () async -> Void, finalMessage: @escaping @Sendable () async -> MQTTMessage?,
        heartbeats: LoopHeartbeats, logger: Logger
    ) {
        self.heartbeats = heartbeats
        self.client = client
        self.drain = drain
        self.handlers = handlers
        self.onConnect = onConnect
        self.finalMessage = finalMessage
        self.logger = logger
    }

    var description: String { "BusService" }

    func run() async throws {
        for handler in handlers { client.subscribe(handler.filter) }
        client.start()
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.consumeEvents() }
                group.addTask { await self.flushAcknowledgementsPeriodically() }
                await group.waitForAll()
            }
        } onGracefulShutdown: {
            Task { await self.shutDown() }
        }
        // Every event of the closed connection has been handled: PUBACKs that came in while it
        // closed (the last slot, the final status) leave the outbox now, rather than being sent
        // again at the next start.
        await drain.settleAcknowledgements()
    }

    private func shutDown() async {
        await drain.flushAcknowledgements()
        let message = await finalMessage()
        client.stop(finalMessage: message)
    }

    private func consumeEvents() async {
        for await event in client.events {
            switch event {
            case .connected(let session, let receiveMaximum):
                await drain.connected(session: session, receiveMaximum: receiveMaximum)
                await onConnect()
            case .disconnected:
                await drain.disconnected()
            case .published(let session, let mid, let reasonCode):
                await drain.published(session: session, mid: mid, reasonCode: reasonCode)
            case .message(let message):
                for handler in handlers where TopicRules.matches(filter: handler.filter, topic: message.topic) {
                    await handler.handle(message)
                }
            }
        }
    }

    /// Acknowledged messages leave the outbox in batches; this bounds how long a batch waits.
    /// It also vouches for the network thread to the watchdog while that thread goes round (or
    /// sits in a blocking connect, which TCP's own timeouts bound).
    private func flushAcknowledgementsPeriodically() async {
        while client.connectionState != .stopped {
            try? await Task.sleep(for: .milliseconds(250))
            await drain.flushAcknowledgements()
            let sinceLoop = secondsSince(uptimeNanoseconds: client.lastLoopUptimeNanos)
            if sinceLoop < 5 || client.connectionState == .connecting { heartbeats.beat("mqtt") }
        }
    }
}
