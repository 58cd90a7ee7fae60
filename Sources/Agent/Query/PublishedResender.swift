import Foundation
import Store
import Synchronization

/// Answers a `ResendRequest` from the store's kept messages (Store+Published.swift), with a
/// read-only connection of its own: `{"ok":true,"from","to","messages":[{"seq","topic","payload"}],
/// "not_kept":[[a,b],…],"next"}`. `payload` is the message as published, as a JSON string;
/// `not_kept` names every seq of the answered part with no message here; `next` is there when
/// the reply was cut for size, and is where to ask from for the rest.
final class PublishedResender: Sendable {
    private let storePath: String
    private let maxBytes: Int
    private let reader = Mutex<StoreReader?>(nil)

    /// Messages per reply, and their bytes at most (or `[query] max_reply_bytes` if smaller):
    /// small enough for any broker's packet limit (ejabberd's in deploy/fleet: 256 KiB).
    static let maximumCount = 500
    static let maximumBytes = 64 * 1024

    init(storePath: String, maxReplyBytes: Int) {
        self.storePath = storePath
        maxBytes = min(maxReplyBytes, Self.maximumBytes)
    }

    func answer(_ request: ResendRequest) -> QueryReply {
        do {
            let range = try reader.withLock { reader in
                if reader == nil {
                    guard FileManager.default.fileExists(atPath: storePath) else {
                        throw QueryError(code: .internal, message: "no store at \(storePath) yet")
                    }
                    reader = try StoreReader(path: storePath)
                }
                // Escaping can grow a JSON payload: a third of the budget is left for it.
                return try reader?.publishedMessages(request.range, maxBytes: maxBytes * 3 / 4, maxCount: Self.maximumCount)
            }
            guard let range else { throw QueryError(code: .internal, message: "no store reader") }
            return QueryReply(body: Self.document(range, request: request).bytes, contentType: QueryReply.json, status: 200)
        } catch let error as QueryError {
            return error.reply
        } catch {
            return QueryError(code: .internal, message: "cannot read the kept messages: \(error)").reply
        }
    }

    static func document(_ range: PublishedRange, request: ResendRequest) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("ok", true), ("from", .int(request.range.lowerBound)), ("to", .int(request.range.upperBound)),
            ("messages", .array(range.messages.map { message in
                .object([
                    ("seq", .int(message.seq)), ("topic", .string(message.topic)),
                    ("payload", .string(String(decoding: message.payload, as: UTF8.self))),
                ])
            })),
            ("not_kept", .array(range.notKept.map { .array([.int($0.lowerBound), .int($0.upperBound)]) })),
        ]
        if range.coveredTo < request.range.upperBound { members.append(("next", .int(range.coveredTo + 1))) }
        return .object(members)
    }
}
