import Agent
import Foundation

/// One device message as the archive keeps it: who sent it (the topic's device level), its
/// `seq`, what it is, and its payload exactly as published.
struct ArchivedMessage: Sendable, Equatable {
    var device: String
    var seq: Int64
    var topic: String
    var kind: Kind
    /// The date of a `health/daily/<date>` aggregate: the archive asks the device for that day.
    var day: String?
    var payload: String

    /// The agent's topics (docs/contract.md): location fixes, aggregates, workouts, the rest.
    enum Kind: String, Sendable {
        case status, location, today, daily, event, workout, gear, result, other
    }

    /// Why a message reaching the archive is not stored as data; each is counted and logged.
    enum Rejection: String, Error, Sendable, CaseIterable {
        /// Not `<prefix>/<device>/…`, or a device level that is not one topic level of text.
        case foreign
        /// A request or command to a device (`selection/date`, `selection/seq`, `cmd/…`): not the device's data.
        case request
        /// The archive's own topics (`<prefix>/archive/…`).
        case archive
        /// No `seq`: the Pi bridge's state (`<prefix>/<device>/bridge/state`), a foreign publisher.
        case noSeq = "no_seq"
        /// Not a UTF-8 JSON object, a `seq` that is not a whole number ≥ 0, a NUL byte.
        case malformed
        /// PostgreSQL refused the row for its content (not for being away).
        case database
    }

    /// Classifies a message from `topic` under `prefix`.
    static func parse(topic: String, payload: [UInt8], prefix: String) -> Result<ArchivedMessage, Rejection> {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard levels.count >= 3, levels[0] == prefix, !levels[1].isEmpty else { return .failure(.foreign) }
        let device = levels[1]
        if device == ArchiveNames.account { return .failure(.archive) }
        let rest = Array(levels[2...])
        if rest == ["selection", "date"] || rest == ["selection", "seq"] || rest.first == "cmd" && rest != ["cmd", "result"] {
            return .failure(.request)
        }
        // The Pi bridge's notifications ("1" connected, "0" not: deploy/fleet/pi-bridge.conf.in).
        if rest == ["bridge", "state"] { return .failure(.noSeq) }
        guard !payload.contains(0), let text = String(validating: payload, as: UTF8.self),
            (try? JSONSerialization.jsonObject(with: Data(payload))) is [String: Any]
        else { return .failure(.malformed) }
        // Decoded as a whole number: JSONSerialization's NSNumber would also take `true` for 1
        // and 2.5 for a seq (and on Linux an NSNumber 1 even passes `is Bool`).
        let seq: Int64
        do {
            guard let decoded = try JSONDecoder().decode(SeqField.self, from: Data(payload)).seq else { return .failure(.noSeq) }
            seq = decoded
        } catch {
            return .failure(.malformed)
        }
        guard seq >= 0 else { return .failure(.malformed) }
        let kind: Kind
        var day: String?
        switch rest.first {
        case "status": kind = .status
        case "location": kind = .location
        case "health" where rest.count == 2 && rest[1] == "today": kind = .today
        case "health" where rest.count == 3 && rest[1] == "daily":
            kind = .daily
            day = rest[2]
        case "event": kind = rest.count == 2 && rest[1] == "workout" ? .workout : .event
        case "workout": kind = .workout
        case "gear": kind = .gear
        case "cmd", "selection": kind = .result
        default: kind = .other
        }
        return .success(ArchivedMessage(device: device, seq: seq, topic: topic, kind: kind, day: day, payload: text))
    }
}

/// Only the `seq` of a device message.
private struct SeqField: Decodable {
    var seq: Int64?
}

/// The archive's fixed names: its account (so its topics are `<prefix>/archive/…`) and where
/// devices answer it.
enum ArchiveNames {
    static let account = "archive"

    /// `reply/<device>/archive/<client id>`: the devices' topic rules let each answer only under
    /// `reply/<its id>/` (deploy/fleet/ejabberd.yml.in).
    static func replyTopic(device: String, clientID: String) -> String { "reply/\(device)/\(account)/\(clientID)" }
}
