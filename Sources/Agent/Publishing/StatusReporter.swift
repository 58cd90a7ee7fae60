import Bus
import Foundation
import Logging
import ServiceLifecycle
import Store

/// Publishes `<root>/status` (retained): on connect, on every sensor state change, and every
/// `status_interval_s`. The offline form is the MQTT will and the last word of a clean stop.
struct StatusReporter: Service, CustomStringConvertible {
    let topic: String
    let interval: Duration
    let store: Store
    let board: SensorBoard
    let counters: IngestCounters
    let drain: OutboxDrain
    let writer: SampleWriter
    /// For sending status live when the store cannot take it (disk full).
    let client: MQTTClient
    let since: Date
    let clock: AgentClock
    let logger: Logger

    var description: String { "StatusReporter(\(topic))" }

    func run() async throws {
        await board.onChange { await publish(reason: "state change") }
        await publish(reason: "start")
        while !Task.isShuttingDownGracefully {
            // nil when the agent is shutting down: the interval is not waited out.
            guard await sleepUnlessShuttingDown(for: interval) else { return }
            await publish(reason: "interval")
        }
    }

    func publish(reason: String) async {
        let document = await onlineDocument()
        do {
            // Supersedable: a status not yet delivered is worthless once a newer one exists.
            try await store.write(SampleBatch(), messages: [
                OutboxDraft(topic: topic, retain: true, supersedable: true) { seq in document(seq).bytes }
            ])
            // A write went through: an error a failed status write left behind (perhaps after the
            // sample writer had already recovered) no longer holds.
            if await board.storageError != nil { await board.update(storageError: nil) }
            await drain.wake()
        } catch {
            // The store cannot take it (disk full, read-only): the status goes out live, so the
            // trouble is visible from outside, with a seq from memory.
            await board.update(storageError: "\(error)")
            let seq = await store.volatileSeq()
            let message = MQTTMessage(topic: topic, payload: document(seq).bytes, qos: .atMostOnce, retain: true, properties: .json)
            if (try? client.publish(message)) == nil {
                logger.warning("cannot queue status and not connected", metadata: ["error": "\(error)", "reason": "\(reason)"])
            }
        }
    }

    /// The online status, waiting only for its seq.
    private func onlineDocument() async -> @Sendable (Int64) -> JSONValue {
        // Sensor stamps of arrival are the kernel's time; the outbox's are the agent's.
        let kernelMs = clock.systemNow().timeIntervalSince1970 * 1000
        let nowMs = clock.now().timeIntervalSince1970 * 1000
        let synchronised = clock.isSynchronised()
        let gps = await board.gps
        let heartRate = await board.heartRate
        let stamps = await board.clock
        let fileProblem = await board.storeFileProblem
        let writeError = await board.storageError
        let storageError = fileProblem ?? writeError
        let reopened = await board.storeReopened
        let outbox = try? await store.outboxSummary()
        let held = await store.heldMessages.count
        let retried = await drain.retried
        let pendingSamples = await writer.pendingSamples
        let space = try? await store.space()
        let journal = await store.journalStatus()
        func age(_ ms: Int64?, from now: Double) -> JSONValue { .number(ms.map { (now - Double($0)) / 1000 }, digits: 1) }
        func counts(_ counter: ReasonCounter) -> JSONValue { .object(counter.snapshot.map { ($0.0, .number($0.1)) }) }
        let rest: [(String, JSONValue)] = [
            ("version", .string(KeepAliveVersion.string)),
            ("since", .timestamp(since)),
            ("gps", .object([
                ("state", .string(gps.state.rawValue)), ("last_fix_age_s", age(gps.lastFixMs, from: kernelMs)), ("reacquisitions", .number(gps.reacquisitions)),
                ("dropped", counts(counters.gpsDropped)),
            ])),
            ("hr", .object([
                ("state", .string(heartRate.state.rawValue)), ("last_sample_age_s", age(heartRate.lastSampleMs, from: kernelMs)),
                ("reacquisitions", .number(heartRate.reacquisitions)), ("bpm", .number(heartRate.lastValidBPM)),
                ("dropped", counts(counters.heartRateDropped)),
                ("receive_time_used", counts(counters.heartRateReceiveTimeUsed)),
            ])),
            ("outbox", .object([
                ("pending", .number(outbox?.pending)), ("oldest_age_s", age(outbox?.oldestCreatedMs, from: nowMs)),
                ("set_aside", .number(outbox?.setAside)), ("retried", .number(retried)), ("held", .number(held)),
                ("kept", .number(outbox?.kept)),
            ])),
            ("store", .object([
                ("bytes", .number(space?.fileBytes)), ("free_bytes", .number(space?.freeDiskBytes)),
                ("pending_samples", .number(pendingSamples)), ("reopened", .number(reopened)),
                ("journal", .object([
                    ("enabled", .bool(journal.enabled)), ("pending_windows", .number(journal.pendingWindows)),
                    ("pending_rows", .number(journal.pendingRows)), ("folds", .number(journal.folds)),
                    ("folded_rows", .number(journal.foldedRows)),
                ])),
            ] + (storageError.map { [("error", JSONValue.string($0))] } ?? []))),
            ("clock", .object([
                ("source", .string(stamps.source)), ("skew_s", .number(stamps.skewS, digits: 3)), ("synchronised", .bool(synchronised)),
            ])),
        ]
        return { seq in .object([("state", "online"), ("seq", .int(seq))] + rest) }
    }

    /// `{"state":"offline",…}`: the will, and what a clean stop publishes.
    static func offlineDocument(seq: Int64, since: Date) -> JSONValue {
        .object([
            ("state", "offline"),
            ("seq", .int(seq)),
            ("version", .string(KeepAliveVersion.string)),
            ("since", .timestamp(since)),
        ])
    }
}
