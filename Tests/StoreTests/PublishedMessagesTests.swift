import Foundation
import Testing
import TestKit

@testable import Store

/// Delivered messages kept for resend requests (Store+Published.swift), on real SQLite files.
@Suite("Published messages kept")
struct PublishedMessagesTests {
    func draft(_ topic: String, supersedable: Bool = false) -> OutboxDraft {
        OutboxDraft(topic: topic, retain: false, supersedable: supersedable) { seq in Array(#"{"seq":\#(seq),"t":"\#(topic)"}"#.utf8) }
    }

    func keeping(_ path: String) throws -> Store { try Store(Store.Configuration(path: path, keepPublished: true)) }

    /// Queues `topics`, delivers them all; the store and the seqs they got.
    func delivered(_ topics: [String], into store: Store) async throws -> [OutboxEntry] {
        try await store.write(messages: topics.map { draft($0) })
        let queued = try await store.pendingMessages(afterID: 0, limit: 100)
        try await store.acknowledge(ids: queued.map(\.id))
        return queued
    }

    @Test("an acknowledged message leaves the queue and is kept, counted in the summary")
    func keptAfterDelivery() async throws {
        let directory = try TemporaryDirectory()
        let store = try keeping(directory.file("k.db"))
        let sent = try await delivered(["a/1", "a/2", "a/3"], into: store)
        #expect(try await store.pendingMessages(afterID: 0, limit: 10).isEmpty)
        #expect(try await store.outboxSummary() == Store.OutboxSummary(pending: 0, oldestCreatedMs: nil, setAside: 0, kept: 3))
        let reader = try StoreReader(path: directory.file("k.db"))
        let range = try reader.publishedMessages(sent[0].seq...sent[2].seq, maxBytes: 1 << 16, maxCount: 100)
        #expect(range.messages.map(\.payload) == sent.map(\.payload))
        #expect(range.notKept.isEmpty && range.coveredTo == sent[2].seq)
    }

    @Test("without keeping, an acknowledged message is deleted as before")
    func deletedWhenNotKept() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(path: directory.file("k.db"))
        _ = try await delivered(["a/1"], into: store)
        let rows = try SQLiteConnection(path: directory.file("k.db"), readOnly: true).scalarInt("SELECT count(*) FROM outbox")
        #expect(rows == 0)
    }

    @Test("a newer status supersedes an undelivered one but never a delivered one")
    func supersedingSparesDelivered() async throws {
        let directory = try TemporaryDirectory()
        let store = try keeping(directory.file("k.db"))
        try await store.write(messages: [draft("s", supersedable: true)])
        let first = try await store.pendingMessages(afterID: 0, limit: 10)
        try await store.acknowledge(ids: first.map(\.id))
        try await store.write(messages: [draft("s", supersedable: true)])
        try await store.write(messages: [draft("s", supersedable: true)])
        let reader = try StoreReader(path: directory.file("k.db"))
        let range = try reader.publishedMessages(first[0].seq...(first[0].seq + 2), maxBytes: 1 << 16, maxCount: 100)
        // The delivered first, the superseded second named as not kept, the newest pending third.
        #expect(range.messages.map(\.seq) == [first[0].seq, first[0].seq + 2])
        #expect(range.notKept == [(first[0].seq + 1)...(first[0].seq + 1)])
    }

    @Test("a status handed to the drain is not superseded while its acknowledgement is on its way")
    func handedOutIsNotSuperseded() async throws {
        let directory = try TemporaryDirectory()
        let store = try keeping(directory.file("k.db"))
        try await store.write(messages: [draft("s", supersedable: true)])
        let sent = try await store.pendingMessages(afterID: 0, limit: 10)
        // The broker has it; the drain has not said so yet when the next status is queued.
        try await store.write(messages: [draft("s", supersedable: true)])
        try await store.acknowledge(ids: sent.map(\.id))
        let reader = try StoreReader(path: directory.file("k.db"))
        let range = try reader.publishedMessages(sent[0].seq...(sent[0].seq + 1), maxBytes: 1 << 16, maxCount: 100)
        #expect(range.messages.map(\.seq) == [sent[0].seq, sent[0].seq + 1] && range.notKept.isEmpty)
    }

    @Test("a reply is cut at its byte budget and says where to go on")
    func cutForSize() async throws {
        let directory = try TemporaryDirectory()
        let store = try keeping(directory.file("k.db"))
        let sent = try await delivered((1...10).map { "t/\($0)" }, into: store)
        let reader = try StoreReader(path: directory.file("k.db"))
        let perMessage = sent[0].payload.count + sent[0].topic.utf8.count
        let range = try reader.publishedMessages(sent[0].seq...sent[9].seq, maxBytes: perMessage * 3, maxCount: 100)
        #expect(range.messages.count == 3 && range.coveredTo == sent[2].seq && range.notKept.isEmpty)
    }

    @Test("pruning drops delivered messages past their age or count, oldest first, never pending ones")
    func pruning() async throws {
        let directory = try TemporaryDirectory()
        let store = try keeping(directory.file("k.db"))
        let sent = try await delivered((1...6).map { "t/\($0)" }, into: store)
        try await store.write(messages: [draft("t/pending")])
        #expect(try await store.prunePublished(createdBeforeMs: nil, keepAtMost: 4) == 2)
        #expect(try await store.outboxSummary().kept == 4)
        let future = sent[0].createdMs + 3_600_000
        while try await store.prunePublished(createdBeforeMs: future, keepAtMost: 100, limit: 3) > 0 {}
        let summary = try await store.outboxSummary()
        #expect(summary.kept == 0 && summary.pending == 1)
    }
}
