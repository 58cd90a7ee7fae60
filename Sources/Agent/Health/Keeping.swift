import Store

/// Where a computation through a read-only connection hands what it computed for the agent's
/// writer to keep: complete sleep epochs (schema 9), finished nights (schema 11) and the folds of
/// a day a backlog landed in (schema 12). Nothing is kept where all are nil: the command line
/// only reads the store.
struct Keeping {
    var epochs: (([StoredSleepEpoch]) -> Void)?
    var night: ((StoredSleepNight) -> Void)?
    var dayFold: ((StoredDayFold) -> Void)?

    static var nothing: Keeping { Keeping() }

    func keep(_ fresh: [StoredSleepEpoch]) {
        if !fresh.isEmpty { epochs?(fresh) }
    }
}
