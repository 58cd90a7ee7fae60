/// One Heart Rate Measurement notification as stored, with its RR intervals.
public struct StoredHeartRate: Sendable, Equatable {
    public var sensor: String
    public var timeMs: Int64
    public var receivedMs: Int64
    public var bpm: Int
    /// 0 unsupported, 1 supported but not detected, 2 detected.
    public var contact: Int
    public var energyKJ: Int?
    public var valid: Bool
    public var raw: [UInt8]
    /// In 1/1024 s, oldest first.
    public var rrIntervals: [Int]
    /// What the bridge sent, hashed (`BridgeOrigin`), for a notification stored at its receive
    /// time: its stored time says nothing of it, so a replay is told by this (unique per sensor).
    /// nil when the bridge's own stamp was believed: then (sensor, time) names it.
    public var origin: Int64?

    public init(
        sensor: String, timeMs: Int64, receivedMs: Int64, bpm: Int, contact: Int, energyKJ: Int? = nil, valid: Bool,
        raw: [UInt8], rrIntervals: [Int] = [], origin: Int64? = nil
    ) {
        self.sensor = sensor
        self.timeMs = timeMs
        self.receivedMs = receivedMs
        self.bpm = bpm
        self.contact = contact
        self.energyKJ = energyKJ
        self.valid = valid
        self.raw = raw
        self.rrIntervals = rrIntervals
        self.origin = origin
    }
}
