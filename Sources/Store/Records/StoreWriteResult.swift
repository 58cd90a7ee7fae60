/// What one write stored: replays of the same data store nothing new.
public struct StoreWriteResult: Sendable, Equatable {
    public var fixesInserted = 0
    public var heartRatesInserted = 0
    public var stepRecordsInserted = 0
    public var seqs: [Int64] = []
}
