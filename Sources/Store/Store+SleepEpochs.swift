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
