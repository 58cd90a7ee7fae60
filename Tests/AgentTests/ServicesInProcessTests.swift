import Bus
import Foundation
import Logging
import Synchronization
import Testing
import TestKit

@testable import Agent
@testable import Store

/// The publishing services run in-process, as swift-service-lifecycle's own tests run services:
/// a real store file, the real sample writer and outbox drain (its broker never reached, so every
/// message stays queued where the test reads it), and a clock the test sets.
@Suite("Services in-process")
struct ServicesInProcessTests {
    /// The kernel's clock as the test sets it by hand; synchronised. `set` moves the time of day
    /// and monotonic time together (time really passed); `step` moves only the time of day (NTP
    /// or chrony setting the clock).
    final class ManualKernel: KernelTime, Sendable {
        private struct State {
            var current: Date
            var monotonic: Duration = .zero
            var synchronised: Bool
        }
        private let state: Mutex<State>
        init(_ start: Date, synchronised: Bool = true) {
            state = Mutex(State(current: start, synchronised: synchronised))
        }
        func now() -> Date { state.withLock { $0.current } }
        func isSynchronised() -> Bool { state.withLock { $0.synchronised } }
        func uptime() -> Duration { state.withLock { $0.monotonic } }
        func set(_ date: Date) {
            state.withLock { state in
                state.monotonic += .milliseconds(Int64((date.timeIntervalSince(state.current) * 1000).rounded()))
                state.current = date
            }
        }
        func step(to date: Date) { state.withLock { $0.current = date } }
        func setSynchronised(_ value: Bool) { state.withLock { $0.synchronised = value } }
    }

    /// An agent clock on a kernel clock the test moves by hand.
    final class ManualClock: Sendable {
        let kernel: ManualKernel
        let agent: AgentClock
        init(_ start: Date, synchronised: Bool = true) {
            kernel = ManualKernel(start, synchronised: synchronised)
            agent = AgentClock(kernel: kernel)
        }
        func now() -> Date { agent.now() }
        func set(_ date: Date) { kernel.set(date) }
        func step(to date: Date) { kernel.step(to: date) }
    }

    struct Rig {
        /// Kept as long as the rig: readers (the workout window's) open the store by its path.
        let directory: TemporaryDirectory
        let store: Store
        let writer: SampleWriter
        let counters: IngestCounters

        init(maxPendingFixes: Int = 50_000) throws {
            directory = try TemporaryDirectory("in-process")
            store = try Store(path: directory.file("k.db"))
            // A client never started: the drain sends nothing, the outbox keeps every message in order.
            let client = MQTTClient(options: MQTTClientOptions(host: "127.0.0.1", port: 9, clientID: "in-process"), logger: Logger(label: "test"))
            let drain = OutboxDrain(store: store, client: client, maxInflight: 20, useProperties: true, logger: Logger(label: "test"))
            counters = IngestCounters(logger: Logger(label: "test"))
            writer = SampleWriter(
                store: store, drain: drain, board: SensorBoard(), counters: counters, heartbeats: LoopHeartbeats(), batchMs: 1000,
                maxPendingFixes: maxPendingFixes, logger: Logger(label: "test"))
        }

        /// The queued messages on `topic`, oldest first, as JSON.
        func queued(_ topic: String) async throws -> [[String: Any]] {
            try await store.pendingMessages(afterID: 0, limit: 1000).filter { $0.topic == topic }.compactMap {
                try JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
            }
        }
    }

    static func fix(atS seconds: Int64, receivedS: Int64) -> StoredFix {
        StoredFix(timeMs: seconds * 1000, receivedMs: receivedS * 1000, lat: 52.5, lon: 13.4, eph: 4, mode: 3, satellites: 9, timeSource: "gps")
    }

    static let t0: Int64 = 1_795_248_000  // 2026-11-21T08:00:00Z, a slot boundary

    @Test("location slots: before any fix on event/no_position (never a location without lat/lon), the fix while fresh, stale with its own tst once older than a slot, missed slots filled in order, a clock jump not")
    func locationSlots() async throws {
        let rig = try Rig()
        let clock = ManualClock(Date(timeIntervalSince1970: Double(Self.t0)))
        let publisher = LocationPublisher(
            topicRoot: "keepalive/p", mirrorTopic: nil, intervalS: 300, deviceID: "pi", writer: rig.writer, clock: clock.agent,
            logger: Logger(label: "test"))
        await publisher.publishSlots(upTo: Self.t0)
        await rig.writer.add(fix: Self.fix(atS: Self.t0 + 10, receivedS: Self.t0 + 10))
        clock.set(Date(timeIntervalSince1970: Double(Self.t0 + 300)))
        await publisher.publishSlots(upTo: Self.t0 + 300)
        clock.set(Date(timeIntervalSince1970: Double(Self.t0 + 600) + 0.5))
        await publisher.publishSlots(upTo: Self.t0 + 600)
        // Three slots missed (a suspended process): filled, in order.
        clock.set(Date(timeIntervalSince1970: Double(Self.t0 + 1800)))
        await publisher.publishSlots(upTo: Self.t0 + 1800)
        var messages = try await rig.queued("keepalive/p/location")
        let noPosition = try await rig.queued("keepalive/p/event/no_position")
        // 08:00 (no fix: its slot's message on event/no_position, never a location without lat/lon,
        // which OwnTracks rejects), 08:05 (fresh), 08:10 (stale), then 08:15, 08:20, 08:25 filled in and 08:30.
        #expect(noPosition.count == 1 && noPosition.first?["stale"] as? Bool == true, "no fix known yet: \(noPosition)")
        #expect(noPosition.first?["_type"] == nil, "not an OwnTracks location: \(noPosition)")
        #expect(messages.count == 6)
        #expect(messages.allSatisfy { $0["_type"] as? String == "location" && $0["lat"] is Double && $0["lon"] is Double })
        let second = messages[0]
        #expect((noPosition.first?["seq"] as? Int ?? .max) < (second["seq"] as? Int ?? 0), "the slots' seqs in order across both topics")
        #expect(second["lat"] as? Double == 52.5 && second["tst"] as? Int == Int(Self.t0 + 10))
        #expect(second.keys.contains("stale") == false)
        #expect(messages[1]["stale"] as? Bool == true && messages[1]["tst"] as? Int == Int(Self.t0 + 10), "older than a slot: stale, its own tst")
        let seqs = messages.compactMap { $0["seq"] as? Int }
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
        #expect((messages + noPosition).allSatisfy { $0["t"] as? String == "t" && $0["tid"] as? String == "pi" })

        // A jump of a day (NTP setting the clock): one message, not 288.
        clock.step(to: Date(timeIntervalSince1970: Double(Self.t0 + 1800 + 86_400)))
        await publisher.publishSlots(upTo: Self.t0 + 1800 + 86_400)
        messages = try await rig.queued("keepalive/p/location")
        #expect(messages.count == 7)
    }

    @Test("the sample writer holds at most maxPendingFixes: past it the oldest go, counted as memory_limit, the newest are stored")
    func writerTrimming() async throws {
        let rig = try Rig(maxPendingFixes: 100)
        for second in 0..<130 { await rig.writer.add(fix: Self.fix(atS: Self.t0 + Int64(second), receivedS: Self.t0 + Int64(second))) }
        #expect(rig.counters.gpsDropped.value(IngestCounters.GPSDrop.memoryLimit) == 30)
        #expect(await rig.writer.pendingSamples == 100)
        try await rig.writer.publish([])
        let stored = try await rig.store.read { try $0.fixes(fromMs: 0, toMs: .max) }
        #expect(stored.count == 100 && stored.first?.timeMs == (Self.t0 + 30) * 1000, "the newest 100 kept")
        #expect(await rig.writer.pendingSamples == 0)
    }

    @Test("messages are queued in the order they were published, each with the next seq, together with the samples that wait")
    func outboxOrder() async throws {
        let rig = try Rig()
        await rig.writer.add(fix: Self.fix(atS: Self.t0, receivedS: Self.t0))
        for index in 0..<20 {
            try await rig.writer.publish([OutboxDraft(topic: "keepalive/p/event/test", retain: false) { seq in Array("{\"i\":\(index),\"seq\":\(seq)}".utf8) }])
        }
        let queued = try await rig.queued("keepalive/p/event/test")
        #expect(queued.compactMap { $0["i"] as? Int } == Array(0..<20))
        let seqs = queued.compactMap { $0["seq"] as? Int }
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 + 1 })
        #expect(try await rig.store.read { try $0.fixes(fromMs: 0, toMs: .max) }.count == 1, "the waiting fix went in with the first message")
    }
}
