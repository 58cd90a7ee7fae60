import Foundation
import Logging
import ServiceLifecycle
import Store

/// Notices, within `interval`, that the store's file was deleted or replaced while the agent runs
/// (`Store.checkFile`: the path's device and inode against the open file's) and reopens it:
/// `status.store.error` while it does, `store.reopened` counted, an `event/storage` saying what
/// happened and what was carried over. Samples waiting in the sample writer are committed to
/// the new file by its next batch, and the outbox is drained again from the oldest message.
struct StoreFileWatchService: Service, CustomStringConvertible {
    let store: Store
    let drain: OutboxDrain
    let writer: SampleWriter
    let board: SensorBoard
    let topicRoot: String
    let clock: AgentClock
    var interval: Duration = .seconds(2)
    let logger: Logger

    var description: String { "StoreFileWatchService" }

    func run() async throws {
        while await sleepUnlessShuttingDown(for: interval) {
            guard let problem = await store.checkFile() else { continue }
            let what = "the store file was \(problem.rawValue) while the agent ran"
            logger.error("\(what); reopening \(store.path)")
            await board.update(storeFileProblem: "\(what); reopening")
            // Acknowledged messages leave the old file first, so they are not carried over.
            await drain.flushAcknowledgements()
            let report: StoreReopened
            do {
                report = try await store.reopen(after: problem)
            } catch {
                logger.error("cannot reopen the store; trying again", metadata: ["error": "\(error)"])
                await board.update(storeFileProblem: "\(what); cannot reopen: \(error)")
                continue
            }
            await drain.storeReplaced()
            await board.noteStoreReopened()
            await board.update(storeFileProblem: nil)
            let carried = SampleKinds.all.map { ($0.rowsName, report.rowsCarried[$0.rowsName] ?? 0) }
            logger.notice("store reopened", metadata: [
                "outbox": "\(report.outboxMessages)", "day_aggregates": "\(report.dayAggregates)",
            ].merging(carried.map { ($0, "\($1)") }) { $1 })
            var details: [(String, JSONValue)] = [
                ("problem", .string(what + (problem == .deleted ? "; a new one was created" : "; the new one is used"))),
                ("carried_over", .object([
                    ("outbox", .number(report.outboxMessages)), ("day_aggregates", .number(report.dayAggregates)),
                ] + carried.map { ($0, .number($1)) })),
            ]
            if let aside = report.movedAside { details.append(("kept_as", .string(aside))) }
            try? await writer.publish([EventDraft.make(root: topicRoot, kind: "storage", details: details, at: clock.now())])
        }
    }
}
