import Bus
import Foundation
import Logging
import Store
import Supervision

/// Moves messages from the store's outbox to the broker, in order, at most `maxInflight` at a
/// time awaiting PUBACK, and deletes each from the outbox only once it is acknowledged.
///
/// In-flight marks live here, in memory, on purpose: after a crash or a lost connection every
/// unacknowledged message is sent again from the oldest (at-least-once), so a durable "in flight"
/// state would cost an SD-card write per message and change nothing.
///
/// A refusal (v5 PUBACK ≥ 0x80) is judged by `PubackPolicy`: a transient one sends the message
/// again, and everything after it, after a capped backoff; a permanent one sets it aside.
/// Messages the store could not take (`Store.hold`) are sent live from here, outside the outbox;
/// their PUBACK releases them from the store's memory.
public actor OutboxDrain {
    private let store: Store
    private let client: MQTTClient
    private let maxInflight: Int
    private let useProperties: Bool
    private let logger: Logger

    private var session: UInt64?
    /// mid → outbox id, for the current session only (mids restart with every session).
    private var inflight: [Int32: Int64] = [:]
    private var lastSentID: Int64 = 0
    /// Goes up whenever sending must start again from an earlier message (a transient refusal,
    /// a replaced store file): a pump that read the outbox before that discards what it read.
    private var rewinds = 0
    private var acknowledged: [Int64] = []
    private var window: Int
    private var pumping = false
    private var pumpAgain = false
    /// mid → seq of a held message sent live (current session only).
    private var liveInflight: [Int32: Int64] = [:]
    /// After a transient refusal: no sending before this, and the backoff that set it.
    private var resumeAt: ContinuousClock.Instant?
    private var retryBackoff = Backoff(minimum: 1, maximum: 60)
    private var attempts: [Int64: Int] = [:]
    /// The store file the outbox ids belong to (`Store.fileGeneration`).
    private var generation = 0
    /// Transient refusals retried since start (for `status.outbox.retried`).
    public private(set) var retried = 0

    public init(store: Store, client: MQTTClient, maxInflight: Int, useProperties: Bool, logger: Logger) {
        self.store = store
        self.client = client
        self.maxInflight = maxInflight
        self.window = maxInflight
        self.useProperties = useProperties
        self.logger = logger
    }

    public var inflightCount: Int { inflight.count }

    public func connected(session: UInt64, receiveMaximum: Int?) async {
        await flushAcknowledgements()
        // Never more in flight than the broker accepts (its v5 Receive Maximum).
        window = min(maxInflight, receiveMaximum ?? maxInflight)
        self.session = session
        inflight = [:]
        liveInflight = [:]
        lastSentID = 0
        await pump()
        // Messages the store could not take while the broker was away: live now.
        await publishLive(await store.heldMessages)
    }

    public func disconnected() {
        session = nil
        inflight = [:]
        liveInflight = [:]
    }

    /// The store's file was replaced (`Store.reopen`): outbox ids now refer to the new file.
    /// Everything unacknowledged is sent again from the oldest, as after a reconnect.
    public func storeReplaced() async {
        generation = await store.fileGeneration
        inflight = [:]
        acknowledged = []
        attempts = [:]
        lastSentID = 0
        rewinds += 1
        await pump()
    }

    /// Sends messages the store holds in memory (it could not queue them) straight to the broker.
    public func publishLive(_ messages: [OutboxEntry]) async {
        guard let session else { return }
        for entry in messages where !liveInflight.values.contains(entry.seq) {
            guard let sent = try? client.publish(message(for: entry)), sent.session == session else { return }
            liveInflight[sent.mid] = entry.seq
        }
    }

    public func published(session: UInt64, mid: Int32, reasonCode: Int32) async {
        guard session == self.session else { return }
        if let seq = liveInflight.removeValue(forKey: mid) {
            // Delivered live: it need not be queued once the store works again.
            if PubackPolicy(reasonCode: reasonCode) == .delivered { await store.releaseHeld(seq: seq) }
            return
        }
        guard let id = inflight.removeValue(forKey: mid) else { return }
        switch PubackPolicy(reasonCode: reasonCode) {
        case .delivered:
            retryBackoff.reset()
            attempts[id] = nil
            acknowledged.append(id)
            if acknowledged.count >= maxInflight { await flushAcknowledgements() }
        case .retry where (attempts[id] ?? 0) + 1 < PubackPolicy.maximumAttempts:
            attempts[id, default: 0] += 1
            retried += 1
            let delay = retryBackoff.nextDelay()
            logger.warning("broker refused a message for now; sending it again", metadata: [
                "outbox_id": "\(id)", "reason_code": "\(reasonCode)", "attempt": "\(attempts[id] ?? 0)", "in_s": "\(String(format: "%.1f", delay))",
            ])
            // This message and everything after it go again, in order, after the backoff.
            await flushAcknowledgements()
            lastSentID = min(lastSentID, id - 1)
            rewinds += 1
            resumeAt = .now + .seconds(delay)
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(delay))
                await self?.wake()
            }
            return
        case .retry, .setAside:
            attempts[id] = nil
            logger.error("broker refused a message; set aside in the outbox", metadata: ["outbox_id": "\(id)", "reason_code": "\(reasonCode)"])
            try? await store.setAside(id: id, reason: "v5 reason code \(reasonCode)", generation: generation)
        }
        await pump()
    }

    /// New messages are in the outbox.
    public func wake() async { await pump() }

    /// Deletes acknowledged messages in one transaction: one fsync for many PUBACKs.
    ///
    /// The batch leaves `acknowledged` before the store is awaited: PUBACKs handled while the
    /// store works on it (the periodic flush runs beside the connection's events) join the next
    /// batch. Emptying the list after the await threw those away: the broker had the messages,
    /// but they stayed pending in the file, behind the drain (never sent again before the next
    /// connection or start) — seen under load as an outbox that never drained.
    public func flushAcknowledgements() async {
        guard !acknowledged.isEmpty else { return }
        let ids = acknowledged
        let generation = generation
        acknowledged.removeAll()
        do {
            try await store.acknowledge(ids: ids, generation: generation)
        } catch {
            // Kept for the next flush (unless the store file was replaced meanwhile: these ids
            // belong to the old one); at worst the messages are sent again after a restart.
            if generation == self.generation { acknowledged.insert(contentsOf: ids, at: 0) }
            logger.warning("could not delete acknowledged messages from the outbox", metadata: ["error": "\(error)"])
        }
    }

    /// At shutdown, once the connection is closed: acknowledged messages are deleted from the
    /// outbox at once (with the ingest journal on they would otherwise wait for a fold that no
    /// longer comes this run).
    public func settleAcknowledgements() async {
        await flushAcknowledgements()
        await store.foldForReaders()
    }

    /// Only one pump runs at a time (the actor is re-entered at every `await`); a call that
    /// arrives meanwhile asks the running one to look again.
    private func pump() async {
        if pumping {
            pumpAgain = true
            return
        }
        pumping = true
        defer { pumping = false }
        repeat {
            pumpAgain = false
            await pumpOnce()
        } while pumpAgain
    }

    private func pumpOnce() async {
        if let resumeAt {
            guard ContinuousClock.now >= resumeAt else { return }
            self.resumeAt = nil
        }
        while let session, inflight.count < window {
            let entries: [OutboxEntry]
            let rewindsBefore = rewinds
            do {
                entries = try await store.pendingMessages(afterID: lastSentID, limit: window - inflight.count)
            } catch {
                logger.warning("cannot read the outbox", metadata: ["error": "\(error)"])
                return
            }
            // A refusal handled while the outbox was being read moved `lastSentID` back: sending
            // what was read would move it past the refused message, which would then never go
            // again (seen under load: it stayed pending while later messages were delivered).
            guard !entries.isEmpty, self.session == session, rewinds == rewindsBefore else { return }
            for entry in entries {
                do {
                    let sent = try client.publish(message(for: entry))
                    guard sent.session == session else { return }
                    inflight[sent.mid] = entry.id
                    lastSentID = entry.id
                } catch MQTTError.notConnected {
                    return
                } catch {
                    // A message libmosquitto refuses outright (oversize, bad UTF-8) would block
                    // the queue forever: set it aside like a broker refusal.
                    logger.error("message refused by libmosquitto; set aside", metadata: ["outbox_id": "\(entry.id)", "error": "\(error)"])
                    let rewindsBefore = rewinds
                    try? await store.setAside(id: entry.id, reason: "\(error)", generation: generation)
                    guard rewinds == rewindsBefore else { return }
                    lastSentID = entry.id
                }
            }
        }
    }

    private func message(for entry: OutboxEntry) -> MQTTMessage {
        var properties = MQTTProperties()
        if useProperties {
            properties.contentType = entry.contentType
            properties.payloadIsUTF8 = entry.contentType == "application/json"
            properties.messageExpiryS = entry.expiryS.map { UInt32(clamping: $0) }
        }
        return MQTTMessage(
            topic: entry.topic, payload: entry.payload, qos: entry.qos == 0 ? .atMostOnce : .atLeastOnce,
            retain: entry.retain, properties: properties)
    }
}
