/// The messages the store still holds for a range of seqs, for a resend request (docs/contract.md,
/// "Resending by seq"): delivered ones the store keeps and ones still waiting in the outbox.
public struct PublishedRange: Sendable, Equatable {
    public struct Message: Sendable, Equatable {
        public var seq: Int64
        public var topic: String
        /// The payload as it was published.
        public var payload: [UInt8]
    }

    /// In seq order.
    public var messages: [Message]
    /// The last seq this answer speaks for: the range's end, or less when the size or count
    /// limit cut it (the rest is asked for from `coveredTo + 1`).
    public var coveredTo: Int64
    /// The seqs up to `coveredTo` with no message here: pruned, superseded before delivery,
    /// refused by the broker, never queued (the will, Home Assistant configs sent again).
    public var notKept: [ClosedRange<Int64>]
}

extension StoreReader {
    /// The messages with a seq in `range`, oldest first, until their payloads and topics pass
    /// `maxBytes` or `maxCount` of them (at least one is given).
    ///
    /// Two steps, so a wide range costs no payload reads beyond what is answered: the seqs, ids
    /// and sizes first (columns before the payload; `length` reads no overflow page), then each
    /// answered row by its id.
    public func publishedMessages(_ range: ClosedRange<Int64>, maxBytes: Int, maxCount: Int) throws -> PublishedRange {
        try snapshot {
            let index = try db.statement(
                "SELECT seq, id, length(topic) + length(payload) FROM outbox WHERE seq >= ? AND seq <= ? ORDER BY seq, id LIMIT ?"
            ).bind(.integer(range.lowerBound), .integer(range.upperBound), .integer(Int64(max(maxCount, 1)) + 1))
            var chosen: [(seq: Int64, id: Int64)] = []
            var bytes = 0
            var coveredTo = range.upperBound
            while try index.step() {
                let (seq, id, size) = (index.int64(0), index.int64(1), Int(index.int64(2)))
                if chosen.last?.seq == seq { continue }
                if !chosen.isEmpty && (bytes + size > maxBytes || chosen.count >= maxCount) {
                    coveredTo = chosen[chosen.count - 1].seq
                    break
                }
                chosen.append((seq, id))
                bytes += size
            }
            index.reset()
            var messages: [PublishedRange.Message] = []
            for (seq, id) in chosen {
                let row = try db.statement("SELECT topic, payload, rejected_reason IS NULL FROM outbox WHERE id = ?").bind(.integer(id))
                defer { row.reset() }
                guard try row.step(), row.int64(2) == 1 else { continue }
                messages.append(PublishedRange.Message(seq: seq, topic: row.text(0), payload: row.blob(1)))
            }
            return PublishedRange(
                messages: messages, coveredTo: coveredTo,
                notKept: Self.holes(in: range.lowerBound...coveredTo, around: messages.map(\.seq)))
        }
    }

    /// The parts of `range` that `seqs` (ascending, inside it) leave out.
    static func holes(in range: ClosedRange<Int64>, around seqs: [Int64]) -> [ClosedRange<Int64>] {
        var holes: [ClosedRange<Int64>] = []
        var next = range.lowerBound
        for seq in seqs {
            if seq > next { holes.append(next...(seq - 1)) }
            next = seq + 1
        }
        if next <= range.upperBound { holes.append(next...range.upperBound) }
        return holes
    }
}
