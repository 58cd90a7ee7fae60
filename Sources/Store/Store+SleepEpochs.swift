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
        var bytes = Array(sensor.utf8)
        for word in [UInt64(bitPattern: startS), inputs] {
            for shift in stride(from: UInt64(0), to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> shift)) }
        }
        return Int64(CRC32.checksum(bytes + vector))
    }
}

/// The kept epochs of one sensor in a time range, by start; rows failing their check are left out
/// and counted (the caller computes them again and logs the count).
public struct SleepEpochRead: Sendable {
    public var epochs: [Int64: StoredSleepEpoch]
    public var failedCheck: Int
}

extension SQLiteConnection {
    func sleepEpochs(sensor: String, fromS: Int64, toS: Int64) throws -> SleepEpochRead {
        let statement = try self.statement(
            "SELECT start_s, inputs, vector, check_crc FROM sleep_epoch WHERE start_s >= ? AND start_s < ? AND sensor = ?"
        ).bind(.integer(fromS), .integer(toS), .text(sensor))
        defer { statement.reset() }
        var read = SleepEpochRead(epochs: [:], failedCheck: 0)
        while try statement.step() {
            let epoch = StoredSleepEpoch(
                sensor: sensor, startS: statement.int64(0), inputs: UInt64(bitPattern: statement.int64(1)), vector: statement.blob(2))
            guard epoch.check == statement.int64(3) else {
                read.failedCheck += 1
                continue
            }
            read.epochs[epoch.startS] = epoch
        }
        return read
    }
}

extension Store {
    public func sleepEpochs(sensor: String, fromS: Int64, toS: Int64) throws -> SleepEpochRead {
        try db.sleepEpochs(sensor: sensor, fromS: fromS, toS: toS)
    }

    /// Keeps epochs (replacing what was kept for the same sensor and start), in one transaction.
    public func saveSleepEpochs(_ epochs: [StoredSleepEpoch]) throws {
        guard !epochs.isEmpty else { return }
        try db.transaction {
            for epoch in epochs {
                try db.statement(
                    "INSERT OR REPLACE INTO sleep_epoch (start_s, sensor, inputs, vector, check_crc) VALUES (?, ?, ?, ?, ?)"
                ).bind(
                    .integer(epoch.startS), .text(epoch.sensor), .integer(Int64(bitPattern: epoch.inputs)), .blob(epoch.vector),
                    .integer(epoch.check)
                ).run()
            }
        }
    }
}

extension StoreReader {
    public func sleepEpochs(sensor: String, fromS: Int64, toS: Int64) throws -> SleepEpochRead {
        try db.sleepEpochs(sensor: sensor, fromS: fromS, toS: toS)
    }
}
