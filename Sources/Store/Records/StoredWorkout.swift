/// A workout as stored (schema 6): its identity and the columns queries select by, and the
/// record a consumer reads, as the JSON the agent published (without `seq`).
public struct StoredWorkout: Sendable, Equatable {
    public var id: String
    public var version: Int
    public var startMs: Int64
    /// Nil while the workout goes on.
    public var endMs: Int64?
    public var sport: String
    /// `auto` (detected) or `manual` (started and stopped by command).
    public var source: String
    public var finished: Bool
    public var distanceM: Double
    public var record: String
    public var updatedMs: Int64

    public init(
        id: String, version: Int = 0, startMs: Int64, endMs: Int64?, sport: String, source: String, finished: Bool,
        distanceM: Double, record: String, updatedMs: Int64
    ) {
        self.id = id
        self.version = version
        self.startMs = startMs
        self.endMs = endMs
        self.sport = sport
        self.source = source
        self.finished = finished
        self.distanceM = distanceM
        self.record = record
        self.updatedMs = updatedMs
    }
}

extension StoredWorkout {
    /// The version a save gives: 0 while a workout goes on, 1 when it first finished, one more
    /// for each change of a finished one (`Store.saveWorkout`; the agent needs it before saving,
    /// to queue `workout/last` first).
    public static func version(saving finished: Bool, over stored: StoredWorkout?) -> Int {
        guard let stored, stored.finished else { return finished ? 1 : 0 }
        return stored.version + 1
    }

    /// The record as published (`workout/last`, queries, `keepalive workouts`): the stored JSON
    /// with `version` (and the message's `seq`) after its `id`. The stored text is the agent's own
    /// output, `{"id":"<uuid>",…}`: spliced, not parsed again.
    public func publishedJSON(seq: Int64? = nil) -> String {
        let prefix = "{\"id\":\"\(id)\""
        var envelope = prefix + ",\"version\":\(version)"
        if let seq { envelope += ",\"seq\":\(seq)" }
        guard record.hasPrefix(prefix) else { return envelope + ",\"record\":" + record + "}" }
        return envelope + record.dropFirst(prefix.count)
    }
}
