/// One sleep epoch's feature vector as kept (schema 9, docs/storage.md): computed once when its
/// window was complete, reused while the beats it was computed from are unchanged.
public struct StoredSleepEpoch: Sendable, Equatable {
    public var sensor: String
    /// The epoch's start, Unix seconds (a multiple of 30).
    public var startS: Int64
    /// The fingerprint of the beats the vector was computed from (`EpochFeatures.Inputs`).
    public var inputs: UInt64
    /// `EpochFeatureVector.bytes`.
    public var vector: [UInt8]

    public init(sensor: String, startS: Int64, inputs: UInt64, vector: [UInt8]) {
        self.sensor = sensor
        self.startS = startS
        self.inputs = inputs
        self.vector = vector
    }

    /// CRC-32 of every column: a row that rotted on the card fails it and is computed again.
    var check: Int64 {
        Int64(CRC32.checksum(Array(sensor.utf8) + CRC32.bytes([UInt64(bitPattern: startS), inputs]) + vector))
    }
}
