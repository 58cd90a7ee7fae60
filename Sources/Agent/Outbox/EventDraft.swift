import Foundation
import Store

/// `<root>/event/<kind>`: not retained, never superseded — each one is something that happened.
/// While the store cannot be written, an event goes out live and is queued once it can.
enum EventDraft {
    static func make(root: String, kind: String, details: [(String, JSONValue)], at time: Date) -> OutboxDraft {
        OutboxDraft(topic: "\(root)/event/\(kind)", retain: false, holdWhenUnstorable: true) { seq in
            JSONValue.object([("kind", .string(kind)), ("seq", .int(seq)), ("ts", .timestamp(time))] + details).bytes
        }
    }
}
