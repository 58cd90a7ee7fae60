import Foundation
import Logging
import ServiceLifecycle
import Store

/// Publishes `<root>/location` (retained, QoS 1, through the outbox) once per slot of
/// `location_interval_s` aligned to the wall clock (:00, :05, … for 300 s), and once right after
/// the first valid fix after start. Every slot yields exactly one message: the newest fix, or
/// the last known one marked `"stale":true` on `location`; before any fix is known, on
/// `<root>/event/no_position` instead, because OwnTracks requires `lat` and `lon` in a location
/// (its Recorder logs an error for each one without, and drops it).
actor LocationPublisher: Service, CustomStringConvertible {
    private let topic: String
    /// Where a slot goes while no position is known: not `location` (see above), not mirrored.
    private let noPositionTopic: String
    private let mirrorTopic: String?
    private let intervalS: Int
    private let trackerID: String
    private let writer: SampleWriter
    /// The agent's clock: slots are cut on its time; a fix is judged stale on the kernel's time,
    /// which stamped its `receivedMs`.
    private let clock: AgentClock
    private let logger: Logger
    /// The slot (its start, Unix s) whose message went out last, and the monotonic time then.
    private var lastSlot: (start: Int64, uptime: Duration)?

    /// A clock jump larger than this many slots (NTP setting a Pi's clock at boot) is not
    /// filled with catch-up messages.
    static let maximumCatchUpSlots: Int64 = 12

    init(
        topicRoot: String, mirrorTopic: String?, intervalS: Int, deviceID: String, writer: SampleWriter,
        clock: AgentClock, logger: Logger
    ) {
        topic = "\(topicRoot)/location"
        noPositionTopic = "\(topicRoot)/event/no_position"
        self.mirrorTopic = mirrorTopic
        self.intervalS = intervalS
        trackerID = Self.trackerID(for: deviceID)
        self.writer = writer
        self.clock = clock
        self.logger = logger
    }

    nonisolated var description: String { "LocationPublisher" }

    /// OwnTracks' `tid`: two characters, the device id's last two like the OwnTracks apps.
    static func trackerID(for deviceID: String) -> String {
        let usable = deviceID.filter { $0.isLetter || $0.isNumber }
        return String((usable.isEmpty ? "ka" : usable).suffix(2))
    }

    /// Longest wait before the clock is read again: a step of the clock (chrony or NTP setting
    /// a Pi's clock) moves the slots onto the new time within this.
    static let recheck: Double = 10

    func run() async throws {
        var nextSlot: Int64?
        while !Task.isShuttingDownGracefully {
            let now = clock.now().timeIntervalSince1970
            let step = Int64(intervalS)
            // A slot more than one interval ahead: the clock stepped back; cut slots anew.
            if nextSlot == nil || Double(nextSlot ?? 0) - now > Double(step) {
                nextSlot = (Int64(now.rounded(.down)) / step + 1) * step
            }
            guard let slot = nextSlot else { return }
            let wait = Double(slot) - now
            if wait > 0 {
                guard await sleepUnlessShuttingDown(for: .seconds(min(wait, Self.recheck))) else { return }
                continue
            }
            // Due: the slot the clock is in now (the clock may have stepped forward past several).
            let current = Int64(now.rounded(.down)) / step * step
            await publishSlots(upTo: current)
            nextSlot = current + step
        }
    }

    /// The first valid fix after start: one message now, outside the slot grid.
    func firstFix() async {
        await publish(slotTime: nil)
    }

    /// Publishes the slot starting at `slot` (Unix s), and the slots missed since the last one
    /// when the time between them really passed (the agent was starved or stopped) and they are
    /// few. A step of the clock is not filled: its slots never happened.
    func publishSlots(upTo slot: Int64) async {
        let step = Int64(intervalS)
        let uptime = clock.uptime()
        var from = slot
        if let lastSlot {
            let missed = (slot - lastSlot.start) / step - 1
            let passed = (uptime - lastSlot.uptime).components.seconds
            let stepped = slot - lastSlot.start - passed
            if slot <= lastSlot.start {
                logger.notice("the clock stepped back; slots follow the new time", metadata: ["by_s": "\(-stepped)"])
            } else if stepped > step {
                logger.notice("the clock stepped forward; not filling the slots in between", metadata: ["by_s": "\(stepped)"])
            } else if missed > 0 && missed <= Self.maximumCatchUpSlots {
                from = lastSlot.start + step
            } else if missed > Self.maximumCatchUpSlots {
                logger.notice("slots missed; not filling them", metadata: ["slots": "\(missed)"])
            }
        }
        var current = from
        while current <= slot {
            await publish(slotTime: current)
            current += step
        }
        lastSlot = (slot, uptime)
    }

    private func publish(slotTime: Int64?) async {
        let now = clock.now()
        let fix = await writer.latestFix
        // Stale: the newest fix arrived more than one interval ago. Judged by when it arrived on
        // the kernel's clock, not its GPS time, which may be far off (see the clock rule).
        let kernelNow = clock.systemNow().timeIntervalSince1970
        let stale = fix.map { kernelNow - Double($0.receivedMs) / 1000 > Double(intervalS) } ?? true
        let members = Self.payloadMembers(fix: fix, stale: stale, createdAt: now, trackerID: trackerID)
        // OwnTracks' trigger "t" (timer) marks slot messages; the first-fix one is off the grid.
        let body = slotTime == nil ? members.filter { $0.0 != "t" } : members
        // Every slot yields one message: while the store cannot take it (disk full) it goes out
        // live and is queued with the same seq once the store works again.
        guard fix != nil else {
            let draft = OutboxDraft(topic: noPositionTopic, retain: false, holdWhenUnstorable: true) { seq in Self.insertSeq(seq, into: body).bytes }
            do { try await writer.publish([draft]) } catch {
                logger.error("cannot queue a slot without position", metadata: ["error": "\(error)"])
            }
            return
        }
        var drafts = [
            OutboxDraft(topic: topic, retain: true, holdWhenUnstorable: true) { seq in Self.insertSeq(seq, into: body).bytes }
        ]
        if let mirrorTopic {
            drafts.append(OutboxDraft(topic: mirrorTopic, retain: true, holdWhenUnstorable: true) { seq in Self.insertSeq(seq, into: body).bytes })
        }
        do {
            try await writer.publish(drafts)
        } catch {
            logger.error("cannot queue a location message", metadata: ["error": "\(error)", "slot": "\(slotTime.map(String.init) ?? "first fix")"])
        }
    }

    private static func insertSeq(_ seq: Int64, into members: [(String, JSONValue)]) -> JSONValue {
        .object(members + [("seq", .int(seq))])
    }

    /// OwnTracks' location fields, integers where OwnTracks has integers.
    static func payloadMembers(fix: StoredFix?, stale: Bool, createdAt: Date, trackerID: String) -> [(String, JSONValue)] {
        guard let fix else {
            // Not a location (no `_type`): OwnTracks consumers of `location` never see it.
            return [("created_at", .int(Int64(createdAt.timeIntervalSince1970))), ("tid", .string(trackerID)), ("t", "t"),
                    ("stale", true), ("reason", "no fix known yet")]
        }
        func integer(_ value: Double?) -> JSONValue { value.map { .int(Int64($0.rounded())) } ?? .null }
        var members: [(String, JSONValue)] = [
            ("_type", "location"),
            ("lat", .number(fix.lat, digits: 7)),
            ("lon", .number(fix.lon, digits: 7)),
            ("tst", .int(fix.timeMs / 1000)),
            ("created_at", .int(Int64(createdAt.timeIntervalSince1970))),
            ("acc", integer(fix.eph)),
            ("alt", integer(fix.altMSL ?? fix.altHAE)),
            ("vac", integer(fix.epv)),
            ("vel", integer(fix.speed.map { $0 * 3.6 })),
            ("cog", integer(fix.track)),
            ("tid", .string(trackerID)),
            ("t", "t"),
            ("mode", .int(Int64(fix.mode))),
            ("sats", .number(fix.satellites)),
        ]
        if stale { members.append(("stale", true)) }
        // OwnTracks leaves out what it does not know rather than sending null.
        return members.filter { $0.1 != .null }
    }
}
