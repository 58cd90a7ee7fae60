import Foundation
import Logging
import ServiceLifecycle
import Store

/// Collects samples and commits them in small batches (`[store] batch_ms`): one transaction,
/// one fsync per batch instead of per sample, for the SD card's sake. Messages that report
/// samples are committed in the same transaction as the samples still waiting.
///
/// When a commit fails (disk full, read-only) the batch is kept and retried; past
/// `maxPending` rows the oldest are dropped and counted, so memory stays bounded.
actor SampleWriter: Service, CustomStringConvertible {
    private let store: Store
    private let drain: OutboxDrain
    private let board: SensorBoard
    private let batchInterval: Duration
    private let logger: Logger
    private let maxPending: Int

    private var fixes: [StoredFix] = []
    private var heartRates: [StoredHeartRate] = []
    private(set) var latestFix: StoredFix?
    private(set) var droppedSamples = 0
    private(set) var lastError: String?

    private let heartbeats: LoopHeartbeats
    /// Fault injection for the watchdog test: `KEEPALIVE_FAULT_WEDGE_WRITER_AFTER_S=N` makes this
    /// loop stop going round after N seconds, as a writer stuck in a system call would.
    private let wedgeAfter: Double? = ProcessInfo.processInfo.environment["KEEPALIVE_FAULT_WEDGE_WRITER_AFTER_S"].flatMap(Double.init)

    init(store: Store, drain: OutboxDrain, board: SensorBoard, heartbeats: LoopHeartbeats, batchMs: Int, maxPending: Int = 100_000,
         logger: Logger) {
        self.heartbeats = heartbeats
        self.store = store
        self.drain = drain
        self.board = board
        self.batchInterval = .milliseconds(max(batchMs, 1))
        self.maxPending = maxPending
        self.logger = logger
    }

    nonisolated var description: String { "SampleWriter" }

    func add(fix: StoredFix) {
        fixes.append(fix)
        if latestFix.map({ fix.timeMs >= $0.timeMs }) ?? true { latestFix = fix }
        trimIfNeeded()
    }

    func add(heartRate: StoredHeartRate) {
        heartRates.append(heartRate)
        trimIfNeeded()
    }

    /// Commits waiting samples together with `messages`, then wakes the outbox drain.
    func publish(_ messages: [OutboxDraft]) async throws {
        try await flush(messages: messages)
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
            guard await sleepUnlessShuttingDown(for: batchInterval) else { break }
            try? await flush(messages: [])
        }
        try? await flush(messages: [])
    }

    private func flush(messages: [OutboxDraft]) async throws {
        guard !fixes.isEmpty || !heartRates.isEmpty || !messages.isEmpty else { return }
        let batchFixes = fixes
        let batchHeartRates = heartRates
        fixes.removeAll(keepingCapacity: true)
        heartRates.removeAll(keepingCapacity: true)
        do {
            try await store.write(fixes: batchFixes, heartRates: batchHeartRates, messages: messages)
            if lastError != nil {
                logger.notice("storing works again")
                lastError = nil
                await board.update(storageError: nil)
            }
        } catch {
            // Put the batch back in front of anything that arrived meanwhile.
            fixes = batchFixes + fixes
            heartRates = batchHeartRates + heartRates
            trimIfNeeded()
            if lastError == nil { logger.error("cannot store; keeping samples in memory and retrying", metadata: ["error": "\(error)"]) }
            lastError = "\(error)"
            await board.update(storageError: lastError)
            throw error
        }
        if !messages.isEmpty { await drain.wake() }
    }

    private func trimIfNeeded() {
        let excess = fixes.count + heartRates.count - maxPending
        guard excess > 0 else { return }
        let fromFixes = min(excess, fixes.count)
        fixes.removeFirst(fromFixes)
        heartRates.removeFirst(min(excess - fromFixes, heartRates.count))
        droppedSamples += excess
    }
}
