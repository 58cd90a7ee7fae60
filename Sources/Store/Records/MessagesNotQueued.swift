/// A write whose rows were stored (in the ingest journal) but whose messages could not be queued
/// (the disk is full, the file read-only): the caller counts the rows as stored and deals with
/// the messages as with any failed write.
public struct MessagesNotQueued: Error, CustomStringConvertible {
    public var stored: StoreWriteResult
    public var underlying: any Error

    public var description: String { "\(underlying)" }
}
