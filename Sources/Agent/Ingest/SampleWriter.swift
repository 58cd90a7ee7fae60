import Foundation
import Logging
import ServiceLifecycle
import Store

/// Collects samples and commits them in small batches (`[store] batch_ms`): one transaction,
/// one fsync per batch instead of per sample, for the SD card's sake. A backlog (a bridge
/// replaying its memory) is committed as soon as `flushThreshold` rows wait, and the heart-rate
/// service waits when it gets two batches ahead: the writer sets the pace of everything upstream. Messages that
/// report samples are committed in the same transaction as the samples still waiting.
///
/// When a commit fails (disk full, read-only) the batch is kept and retried every second.
/// Heart-rate notifications wait beyond `maxPendingHeartRates` (their bridges hold the rest);
/// fixes cannot wait (gpsd drops a slow client's data), so past `maxPendingFixes` the oldest are
/// dropped and counted (`memory_limit`). Messages marked `holdWhenUnstorable` (locations,
/// events) go out live and are queued with the same seq once the store works again.
actor SampleWriter: Service, CustomStringConvertible {
    private let store: Store
    private let drain: OutboxDrain
    private let board: SensorBoard
    private let counters: IngestCounters
    private let batchInterval: Duration
    private let logger: Logger
    private let maxPendingFixes: Int
    private let maxPendingHeartRates: Int
    private let flushThreshold: Int

    private var fixes: [StoredFix] = []
    /// What the sensor bridges sent (every kind but fixes), waiting together.
    private var bridge = SampleBatch()
    private(set) var latestFix: StoredFix?
    /// Samples in the commit under way: still in memory, and put back if it fails.
    private var committing = (fixes: 0, bridge: 0)
    /// Samples waiting in memory for a commit (for `status.store.pending_samples`).
    var pendingSamples: Int { fixes.count + bridgeRows + committing.fixes + committing.bridge }
    /// The bridges' rows held: what their bound counts.
    private var bridgeRows: Int { bridge.count }
    private(set) var lastError: String?
    /// The commit a backlog started, while it runs.
    private var backlogCommit: Task<Void, Never>?
    /// Heart-rate producers waiting for the next commit attempt (the writer was full).
    private var waitingForAttempt: [CheckedContinuation<Void, Never>] = []
    private var stopped = false

    private let heartbeats: LoopHeartbeats
    /// Fault injection for the watchdog test (`TestHooks.wedgeWriterAfterS`).
    private let wedgeAfter: Double? = TestHooks.current.wedgeWriterAfterS

    init(store: Store, drain: OutboxDrain, board: SensorBoard, counters: IngestCounters, heartbeats: LoopHeartbeats, batchMs: Int,
         maxPendingFixes: Int = 50_000, maxPendingHeartRates: Int = 20_000, flushThreshold: Int = 1000, logger: Logger) {
        self.heartbeats = heartbeats
        self.store = store
        self.drain = drain
        self.board = board
        self.counters = counters
        self.batchInterval = .milliseconds(max(batchMs, 1))
        self.maxPendingFixes = maxPendingFixes
        self.maxPendingHeartRates = maxPendingHeartRates
        self.flushThreshold = flushThreshold
        self.logger = logger
    }

    nonisolated var description: String { "SampleWriter" }

    /// Never waits: the GPS reader must keep up with gpsd.
    func add(fix: StoredFix) {
        fixes.append(fix)
        if latestFix.map({ fix.timeMs >= $0.timeMs }) ?? true { latestFix = fix }
        trimFixes()
    }

    /// Past `maxPendingFixes` (the store has failed for hours) the oldest fixes go, counted.
    private func trimFixes() {
        guard fixes.count > maxPendingFixes else { return }
        let excess = fixes.count - maxPendingFixes
        fixes.removeFirst(excess)
        counters.gpsDropped.count(IngestCounters.GPSDrop.memoryLimit, excess, detail: "the store cannot be written: \(lastError ?? "?")")
    }

    /// What the strap's step windows remembered of their batches' origins when the agent last
    /// stopped (none, logged, when the store cannot be read: a replay is then counted again).
    func recentAccelerometerOrigins(perSensor: Int) async -> [String: [Int64]] {
        do {
            return try await store.read { try $0.recentAccelerometerOrigins(perSensor: perSensor) }
        } catch {
            logger.warning("could not read the accelerometer batches' origins back", metadata: ["error": "\(error)"])
            return [:]
        }
    }

    /// Takes notifications. Once a backlog has built up (`flushThreshold` rows) it is committed
    /// in the background while the caller goes on parsing; a caller that gets two batches ahead
    /// of the store waits for the commit. False when the writer already holds
    /// `maxPendingHeartRates` (the store is failing): the call then returned at the next commit
    /// attempt, and the caller tries again. With `mayWait` false (shutting down) it always takes them.
    func add(bridgeRows rows: SampleBatch, mayWait: Bool = true) async -> Bool {
        if mayWait && !stopped && bridgeRows + committing.bridge >= maxPendingHeartRates {
            await withCheckedContinuation { waitingForAttempt.append($0) }
            return false
        }
        bridge.append(contentsOf: rows)
        guard lastError == nil, fixes.count + bridgeRows >= flushThreshold else { return true }
        if let running = backlogCommit {
            if mayWait && fixes.count + bridgeRows >= 2 * flushThreshold { await running.value }
        } else {
            backlogCommit = Task {
                try? await flush(messages: [])
                backlogCommit = nil
            }
        }
        return true
    }

    /// Commits waiting samples together with `messages`, then wakes the outbox drain. When the
    /// store cannot be written, messages marked `holdWhenUnstorable` are held and sent live (this
    /// returns normally for them); it throws if any other message could not be queued.
    /// `workouts` are saved in the messages' transaction (the workout a message announces is in
    /// the store before any client hears of it); it throws if they could not be.
    func publish(_ messages: [OutboxDraft], saving workouts: [StoredWorkout] = []) async throws {
        try await flush(messages: messages, workouts: workouts)
    }

    func run() async throws {
        let started = ContinuousClock.now
        while !Task.isShuttingDownGracefully {
            heartbeats.beat("writer")
            if let wedgeAfter, ContinuousClock.now - started > .seconds(wedgeAfter) {
                logger.warning("fault injection: the writer loop stops here")
                while await sleepUnlessShuttingDown(for: .seconds(3600)) {}
                return
            }
            // A failing store is retried every second whatever the batch window.
            guard await sleepUnlessShuttingDown(for: lastError == nil ? batchInterval : min(batchInterval, .seconds(1))) else { break }
            try? await flush(messages: [])
        }
        stopped = true
        resumeWaiting()
        do {
            try await flush(messages: [])
        } catch {
            logger.error("samples not stored at shutdown", metadata: ["fixes": "\(fixes.count)", "bridge_rows": "\(bridge.count)", "error": "\(error)"])
        }
        // What the journal holds goes to the tables, for whatever reads the file next.
        await store.foldForReaders()
    }

    private func flush(messages: [OutboxDraft], workouts: [StoredWorkout] = []) async throws {
        defer { resumeWaiting() }
        // Held messages (sent live while the store failed) are queued by the next write.
        let holding = await store.holdsMessages
        guard !fixes.isEmpty || !bridge.isEmpty || !messages.isEmpty || !workouts.isEmpty || holding else {
            await store.foldJournalIfDue()
            return
        }
        let batchFixes = fixes
        let batchBridge = bridge
        fixes.removeAll(keepingCapacity: true)
        bridge = SampleBatch()
        committing.fixes += batchFixes.count
        committing.bridge += batchBridge.count
        var rows = batchBridge
        rows[FixKind.self] = batchFixes
        let written: Result<StoreWriteResult, any Error>
        var messagesFailed: (any Error)?
        do {
            written = .success(
                try await store.write(rows, messages: messages, workouts: workouts))
        } catch let partial as MessagesNotQueued {
            // The samples are stored (the ingest journal); only the messages are not.
            written = .success(partial.stored)
            messagesFailed = partial.underlying
        } catch {
            written = .failure(error)
        }
        committing.fixes -= batchFixes.count
        committing.bridge -= batchBridge.count
        do {
            let result = try written.get()
            let fixesInserted = result.inserted(FixKind.self)
            counters.gpsDropped.count(IngestCounters.GPSDrop.duplicate, batchFixes.count - fixesInserted)
            counters.heartRateDropped.count(IngestCounters.HeartRateDrop.duplicate, batchBridge.count - (result.rowsInserted - fixesInserted))
            if let messagesFailed { throw messagesFailed }
            if lastError != nil {
                logger.notice("storing works again")
                lastError = nil
                await board.update(storageError: nil)
            }
        } catch {
            if messagesFailed == nil {
                // Put the batch back in front of anything that arrived meanwhile.
                fixes = batchFixes + fixes
                var putBack = batchBridge
                putBack.append(contentsOf: bridge)
                bridge = putBack
                trimFixes()
            }
            if lastError == nil { logger.error("cannot store; keeping samples in memory and retrying", metadata: ["error": "\(error)"]) }
            lastError = "\(error)"
            await board.update(storageError: lastError)
            try await holdUnstorable(messages, error: error)
            // Not saved: the caller tries again (the workout service at its next look).
            if !workouts.isEmpty { throw error }
            return
        }
        await drain.wake()
    }

    /// The store cannot take `messages`: those that must not be lost are held in memory with
    /// their seq and sent live; throws `error` when any of the others could not be queued.
    private func holdUnstorable(_ messages: [OutboxDraft], error: any Error) async throws {
        let holdable = messages.filter(\.holdWhenUnstorable)
        if !holdable.isEmpty {
            let held = await store.hold(holdable)
            logger.warning("cannot queue messages; sending them live and holding them until the store works", metadata: [
                "topics": "\(held.map(\.topic).joined(separator: ","))", "seqs": "\(held.map(\.seq))",
            ])
            await drain.publishLive(held)
        }
        if holdable.count < messages.count { throw error }
    }

    private func resumeWaiting() {
        let waiting = waitingForAttempt
        waitingForAttempt.removeAll()
        for continuation in waiting { continuation.resume() }
    }
}
