import Foundation
import Logging
import ServiceLifecycle
import Store

/// Prunes raw samples older than `retention_days`, and the oldest first while the file holds
/// more than `max_bytes`, in small transactions with pauses between them so ingest never waits
/// long. Aggregates are kept. Delivered messages kept for resend requests are pruned the same
/// way. Runs shortly after start and then hourly.
struct RetentionService: Service, CustomStringConvertible {
    let store: Store
    let retentionDays: Int
    let maxBytes: Int
    let clock: AgentClock
    let logger: Logger
    /// Delivered messages kept for resend requests: hours and count (`[store] keep_published_h`,
    /// `keep_published_max`); nil when none are kept.
    var keepPublished: (hours: Int, count: Int)?
    var firstRunAfter: Duration = .seconds(60)
    var period: Duration = .seconds(3600)

    var description: String { "RetentionService" }

    func run() async throws {
        var wait = firstRunAfter
        while true {
            guard await sleepUnlessShuttingDown(for: wait) else { return }
            wait = period
            do {
                if let now = clock.trustedNow() {
                    try await pruneOnce(now: now)
                } else {
                    // A Pi booted at its last saved time (or in 1970) with no GPS time yet: an age
                    // cut on that clock could drop recent days. Only the size cap applies.
                    logger.notice("the clock is not trusted yet; pruning by size only")
                    try await pruneOnce(now: nil)
                }
            } catch {
                logger.warning("pruning failed; will try again", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Prunes by age on `now` (nil: by size only).
    func pruneOnce(now: Date?) async throws {
        var deleted = 0
        if let now {
            deleted += try await pruneChunks(beforeMs: Int64((now.timeIntervalSince1970 - Double(retentionDays) * 86_400) * 1000))
        }
        if maxBytes > 0 {
            // Over the cap: drop the oldest hour of raw data at a time until under it.
            while try await store.space().usedBytes > Int64(maxBytes), let oldest = try await store.oldestRawTimeMs() {
                let removed = try await pruneChunks(beforeMs: oldest + 3_600_000)
                deleted += removed
                if removed == 0 { break }
            }
        }
        let published = try await prunePublished(now: now)
        if deleted > 0 || published > 0 {
            try await store.releaseFreePages(10_000)
            logger.info("pruned raw samples and kept messages", metadata: ["rows": "\(deleted)", "messages": "\(published)"])
        }
    }

    /// Kept messages past their hours (by age only on a trusted clock) or their count, in
    /// batches with the same pauses as raw rows.
    private func prunePublished(now: Date?) async throws -> Int {
        guard let keepPublished else { return 0 }
        let before = now.map { Int64(($0.timeIntervalSince1970 - Double(keepPublished.hours) * 3600) * 1000) }
        var total = 0
        while true {
            let deleted = try await store.prunePublished(createdBeforeMs: before, keepAtMost: keepPublished.count)
            total += deleted
            if deleted == 0 || Task.isShuttingDownGracefully { return total }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private func pruneChunks(beforeMs: Int64) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await store.pruneRawRows(beforeMs: beforeMs, limit: 2000)
            total += deleted
            if deleted == 0 || Task.isShuttingDownGracefully { return total }
            // Let ingest and the outbox in between chunks.
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
