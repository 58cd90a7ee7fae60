import Foundation

/// A request to send published messages again by seq, on `<root>/selection/seq`
/// (docs/contract.md, "Resending by seq"): `{"from":N,"to":M,"reply_to":…}`, whole numbers with
/// 0 ≤ N ≤ M. The same size limit, reply routing and error replies as a per-date query.
struct ResendRequest: Sendable, Equatable {
    var range: ClosedRange<Int64>
    var replyTo: String?

    static let keys = ["from", "to", "reply_to"]
    /// Seqs above this are refused: no agent gets there, and `to + 1` must not overflow.
    static let largestSeq: Int64 = 1 << 53

    static func parse(_ payload: [UInt8]) -> Result<ResendRequest, QueryError> {
        guard payload.count <= QueryRequest.maximumBytes else {
            return .failure(QueryError(
                code: .tooLarge, message: "request of \(payload.count) bytes; at most \(QueryRequest.maximumBytes) are read"))
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] else {
            return .failure(bad("expected a JSON object like {\"from\":120,\"to\":140}"))
        }
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            return .failure(bad("unknown key \"\(unknown)\" (known: \(keys.joined(separator: ", ")))"))
        }
        // Decoded as whole numbers: JSONSerialization's NSNumber would also take `true` or 2.5.
        guard let bounds = try? JSONDecoder().decode(Bounds.self, from: Data(payload)) else {
            return .failure(bad("\"from\" and \"to\" must be whole numbers (seqs)"))
        }
        guard let from = bounds.from, let to = bounds.to else {
            return .failure(bad("\"\(bounds.from == nil ? "from" : "to")\" is missing"))
        }
        guard from >= 0, from <= to, to <= largestSeq else {
            return .failure(bad("need 0 ≤ from ≤ to ≤ \(largestSeq); got from \(from), to \(to)"))
        }
        var request = ResendRequest(range: from...to)
        if let replyTo = object["reply_to"] {
            guard let topic = replyTo as? String else { return .failure(bad("\"reply_to\" must be a topic string")) }
            request.replyTo = topic
        }
        return .success(request)
    }

    private static func bad(_ message: String) -> QueryError { QueryError(code: .badRequest, message: message) }

    private struct Bounds: Decodable {
        var from: Int64?
        var to: Int64?
    }
}
