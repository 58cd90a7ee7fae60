import Foundation
import Logging
import Store

/// Shoes (any gear) and the runs credited to them: the `cmd/gear` operations, the automatic
/// credit of a finished run to the selected pair, and what each publishes — retained
/// `gear/<id>`, and `event/gear` for each credit and, once each, at 80 % and 100 % of the limit.
/// Credits are keyed by the workout's id in the store, so crediting again changes nothing.
actor GearBook {
    private let store: Store
    private let writer: SampleWriter
    private let topicRoot: String
    private let clock: AgentClock
    private let autoCredit: Bool
    private let logger: Logger
    /// Told of every pair published (added, selected, credited, retired): Home Assistant's shoe sensors.
    private let gearChanged: @Sendable (StoredGear) async -> Void

    /// Percentages of `limit_km` announced once each.
    static let limitPercents = [80, 100]

    init(
        store: Store, writer: SampleWriter, topicRoot: String, clock: AgentClock, autoCredit: Bool, logger: Logger,
        gearChanged: @escaping @Sendable (StoredGear) async -> Void = { _ in }
    ) {
        self.clock = clock
        self.gearChanged = gearChanged
        self.store = store
        self.writer = writer
        self.topicRoot = topicRoot
        self.autoCredit = autoCredit
        self.logger = logger
    }

    /// An id goes into a topic: letters, digits, `-` and `_`, up to 64.
    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" || $0 == "_" }
    }

    // MARK: - Operations

    func add(id: String, name: String, startKm: Double, limitKm: Double?) async throws -> StoredGear {
        try await store.addGear(id: id, name: name, startKm: startKm, limitKm: limitKm, nowMs: clock.nowMs())
        return try await announce(id)
    }

    func select(id: String) async throws -> StoredGear {
        let previous = try await store.readStored { try $0.selectedGear() }
        try await store.selectGear(id: id)
        if let previous, previous.id != id { _ = try await announce(previous.id) }
        return try await announce(id)
    }

    func retire(id: String) async throws -> StoredGear {
        try await store.retireGear(id: id)
        return try await announce(id)
    }

    /// Moves a finished workout's credit to `gearID` (nil: to no pair).
    func assign(workout: StoredWorkout, to gearID: String?) async throws -> StoredGear? {
        guard let gearID else {
            if let previous = try await store.uncredit(workoutID: workout.id) { _ = try await announce(previous) }
            return nil
        }
        return try await credit(workout, to: gearID)
    }

    /// A run just finished (or was detected again): credited to the selected pair when
    /// `auto_credit` is on and it has no pair yet; its distance updated where it has one.
    func workoutFinished(_ workout: StoredWorkout) async throws {
        if let existing = try await store.readStored({ try $0.gearCredit(workoutID: workout.id) }) {
            _ = try await credit(workout, to: existing.gearID)
            return
        }
        guard autoCredit, workout.sport == "run" else { return }
        guard let selected = try await store.readStored({ try $0.selectedGear() }) else {
            logger.info("a run finished with no shoes selected; it waits for `keepalive gear assign`", metadata: ["workout": "\(workout.id)"])
            return
        }
        _ = try await credit(workout, to: selected.id)
    }

    func list() async throws -> [StoredGear] { try await store.readStored { try $0.allGear() } }

    // MARK: - Publishing

    private func credit(_ workout: StoredWorkout, to gearID: String) async throws -> StoredGear? {
        let km = workout.distanceM / 1000
        let outcome = try await store.credit(
            workoutID: workout.id, to: gearID, km: km, workoutEndMs: workout.endMs ?? workout.startMs, nowMs: clock.nowMs())
        if case .unchanged = outcome { return try await store.readStored { try $0.gear(id: gearID) } }
        if case .moved(let from) = outcome { _ = try await announce(from) }
        guard let gear = try await store.readStored({ try $0.gear(id: gearID) }) else { return nil }
        var drafts = [
            EventDraft.make(root: topicRoot, kind: "gear", details: [
                ("op", "credited"), ("gear", .string(gearID)), ("name", .string(gear.name)), ("workout", .string(workout.id)),
                ("km", .number(km, digits: 3)), ("total_km", .number(gear.totalKm, digits: 3)),
            ], at: clock.now())
        ]
        if let limit = gear.limitKm, limit > 0 {
            let crossed = Self.limitPercents.filter { $0 > gear.warnedPercent && gear.totalKm >= limit * Double($0) / 100 }
            for percent in crossed {
                drafts.append(EventDraft.make(root: topicRoot, kind: "gear", details: [
                    ("op", "limit"), ("gear", .string(gearID)), ("name", .string(gear.name)), ("percent", .number(percent)),
                    ("total_km", .number(gear.totalKm, digits: 3)), ("limit_km", .number(limit, digits: 3)),
                    ("message", .string(percent >= 100 ? "time for new shoes" : "\(gear.name) has reached \(percent) % of its limit")),
                ], at: clock.now()))
            }
            if let highest = crossed.last { try await store.markGearWarned(id: gearID, percent: highest) }
        }
        try await writer.publish(drafts + [Self.retained(gear, root: topicRoot)])
        await gearChanged(gear)
        logger.info("run credited", metadata: ["gear": "\(gearID)", "workout": "\(workout.id)", "km": "\(km)", "total_km": "\(gear.totalKm)"])
        return gear
    }

    @discardableResult
    private func announce(_ id: String) async throws -> StoredGear {
        guard let gear = try await store.readStored({ try $0.gear(id: id) }) else { throw GearError.unknown(id) }
        try await writer.publish([Self.retained(gear, root: topicRoot)])
        await gearChanged(gear)
        return gear
    }

    static func retained(_ gear: StoredGear, root: String) -> OutboxDraft {
        OutboxDraft(topic: "\(root)/gear/\(gear.id)", retain: true, supersedable: true) { seq in
            JSONValue.object(json(gear) + [("seq", .int(seq))]).bytes
        }
    }

    /// A pair as `gear/<id>`, `keepalive gear list` and the command replies show it.
    static func json(_ gear: StoredGear) -> [(String, JSONValue)] {
        [
            ("id", .string(gear.id)), ("name", .string(gear.name)), ("total_km", .number(gear.totalKm, digits: 3)),
            ("start_km", .number(gear.startKm, digits: 3)), ("runs", .number(gear.runs)),
            ("last_used", gear.lastUsedMs.map { .timestamp(Date(unixMs: $0)) } ?? .null),
            ("limit_km", .number(gear.limitKm, digits: 3)), ("selected", .bool(gear.selected)), ("retired", .bool(gear.retired)),
        ]
    }

}

enum GearError: Error, CustomStringConvertible {
    case unknown(String)

    var description: String {
        switch self {
        case .unknown(let id): "no gear with id \"\(id)\" (add it first: keepalive gear add)"
        }
    }
}
