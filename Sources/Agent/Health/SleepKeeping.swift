import Store

/// Where a computation through a read-only connection hands what it computed for the agent's
/// writer to keep: complete sleep epochs (schema 9) and finished nights (schema 11). Nothing is
/// kept where both are nil: the command line only reads the store.
struct SleepKeeping {
    var epochs: (([StoredSleepEpoch]) -> Void)?
    var night: ((StoredSleepNight) -> Void)?

    static var nothing: SleepKeeping { SleepKeeping() }

    func keep(_ fresh: [StoredSleepEpoch]) {
        if !fresh.isEmpty { epochs?(fresh) }
    }
}
