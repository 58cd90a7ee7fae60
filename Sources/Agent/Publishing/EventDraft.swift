import Foundation
import Store

/// `<root>/event/<kind>`: not retained, never superseded — each one is something that happened.
enum EventDraft {
    static func make(root: String, kind: String, details: [(String, JSONValue)], at time: Date = Date()) -> OutboxDraft {
        OutboxDraft(topic: "\(root)/event/\(kind)", retain: false) { seq in
            JSONValue.object([("kind", .string(kind)), ("seq", .int(seq)), ("ts", .timestamp(time))] + details).bytes
        }
    }
}
