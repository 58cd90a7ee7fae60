/// What a step sensor delivered, as stored: a foot pod's RSC notification (0x2A53, decoded when
/// read), or the steps a chest strap's accelerometer showed in one short window.
public struct StoredStepRecord: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// Running Speed and Cadence Measurement: `raw` holds the value as received.
        case rsc
        /// Steps estimated from acceleration in one window: `endMs`, `coveredMs`, `steps`.
        case accelerometer = "acc"
    }

    public var sensor: String
    public var kind: Kind
    /// rsc: the notification's time; acc: the first sample of the window (with the sensor, it
    /// names the window: a replay of the same stream stores nothing new).
    public var timeMs: Int64
    public var receivedMs: Int64
    /// rsc: the 0x2A53 value as received. acc: the origins of the batches the window counted at
    /// their receive time (`batchOrigins`), so that their replay is still told after a restart.
    public var raw: [UInt8]
    public var endMs: Int64?
    public var coveredMs: Int64?
    public var steps: Int?
    /// rsc stored at its receive time: what the bridge sent, hashed (as `StoredHeartRate.origin`).
    public var origin: Int64?

    public init(sensor: String, timeMs: Int64, receivedMs: Int64, rsc raw: [UInt8], origin: Int64? = nil) {
        self.origin = origin
        self.sensor = sensor
        kind = .rsc
        self.timeMs = timeMs
        self.receivedMs = receivedMs
        self.raw = raw
    }

    public init(
        sensor: String, firstSampleMs: Int64, lastSampleMs: Int64, receivedMs: Int64, coveredMs: Int64, steps: Int,
        batchOrigins: [Int64] = []
    ) {
        self.sensor = sensor
        kind = .accelerometer
        timeMs = firstSampleMs
        self.receivedMs = receivedMs
        raw = batchOrigins.flatMap { origin in (0..<8).map { UInt8(truncatingIfNeeded: origin >> ($0 * 8)) } }
        endMs = lastSampleMs
        self.coveredMs = coveredMs
        self.steps = steps
    }

    /// acc: the origins packed in `raw` (none for a window whose batches carried believed stamps).
    public var batchOrigins: [Int64] { kind == .accelerometer ? Self.origins(packed: raw) : [] }

    /// Origins packed 8 bytes little-endian each, as an acc window's `raw` holds them.
    static func origins(packed raw: [UInt8]) -> [Int64] {
        stride(from: 0, to: raw.count - raw.count % 8, by: 8).map { start in
            (0..<8).reduce(Int64(0)) { value, byte in value | Int64(raw[start + byte]) << (byte * 8) }
        }
    }
}
