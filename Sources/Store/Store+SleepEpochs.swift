extension Store {
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
