import Foundation

/// A request on `<root>/cmd/workout` or `<root>/cmd/gear` (docs/contract.md, "Commands"): a
/// JSON object with `op` and the operation's fields, checked before anything is done.
struct CommandRequest: Sendable, Equatable {
    enum Target: String, Sendable { case workout, gear }

    enum Operation: Sendable, Equatable {
        case startWorkout(sport: String?)
        case stopWorkout(sport: String?)
        case addGear(id: String, name: String, startKm: Double, limitKm: Double?)
        case selectGear(id: String)
        case retireGear(id: String)
        /// `gear` nil: the workout is credited to no pair.
        case assign(workout: String, gear: String?)
        case listGear
    }

    var operation: Operation
    var replyTo: String?

    static let maximumBytes = 4096
    static let keys: Set<String> = ["op", "sport", "id", "name", "start_km", "limit_km", "workout", "reply_to"]

    static func parse(_ payload: [UInt8], target: Target) -> Result<CommandRequest, QueryError> {
        guard payload.count <= maximumBytes else {
            return .failure(QueryError(code: .tooLarge, message: "a command is at most \(maximumBytes) bytes"))
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] else {
            return .failure(bad("a command is a JSON object, e.g. {\"op\":\"start\",\"sport\":\"run\"}"))
        }
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            return .failure(bad("unknown key \"\(unknown)\" (known: \(keys.sorted().joined(separator: ", ")))"))
        }
        do {
            let fields = Fields(object)
            let replyTo = try fields.string("reply_to")
            let op = try fields.string("op") ?? ""
            let operation: Operation
            switch (target, op) {
            case (.workout, "start"): operation = .startWorkout(sport: try fields.sport())
            case (.workout, "stop"): operation = .stopWorkout(sport: try fields.sport())
            case (.gear, "add"):
                let name = try fields.string("name")
                let id = try fields.string("id") ?? name.map(slug) ?? ""
                guard GearBook.isValidID(id) else { throw bad("\"id\" must be 1-64 letters, digits, - or _ (it names a topic)") }
                guard let name, !name.isEmpty, name.utf8.count <= 200 else { throw bad("\"name\" is required (up to 200 bytes)") }
                let startKm = try fields.number("start_km") ?? 0
                let limitKm = try fields.number("limit_km")
                guard startKm >= 0, startKm < 1_000_000, (limitKm ?? 1) > 0, (limitKm ?? 1) < 1_000_000 else {
                    throw bad("\"start_km\" must be ≥ 0 and \"limit_km\" > 0")
                }
                operation = .addGear(id: id, name: name, startKm: startKm, limitKm: limitKm)
            case (.gear, "select"): operation = .selectGear(id: try fields.gearID())
            case (.gear, "retire"): operation = .retireGear(id: try fields.gearID())
            case (.gear, "assign"):
                guard let workout = try fields.string("workout"), !workout.isEmpty else { throw bad("\"workout\" (a workout id) is required") }
                let gear = try fields.string("id")
                if let gear, !GearBook.isValidID(gear) { throw bad("\"id\" is not a gear id") }
                operation = .assign(workout: workout, gear: gear)
            case (.gear, "list"): operation = .listGear
            default:
                let known = target == .workout ? "start, stop" : "add, select, retire, assign, list"
                throw bad("\"op\" must be one of \(known), got \"\(op)\"")
            }
            return .success(CommandRequest(operation: operation, replyTo: replyTo))
        } catch let error as QueryError {
            return .failure(error)
        } catch {
            return .failure(bad("\(error)"))
        }
    }

    /// `Pegasus 41!` → `pegasus-41`.
    static func slug(_ name: String) -> String {
        let words = name.lowercased().unicodeScalars.split { !(CharacterSet.alphanumerics.contains($0) && $0.isASCII) }
        return String(words.map { String(String.UnicodeScalarView($0)) }.joined(separator: "-").prefix(64))
    }

    private static func bad(_ message: String) -> QueryError { QueryError(code: .badRequest, message: message) }

    private struct Fields {
        let object: [String: Any]
        init(_ object: [String: Any]) { self.object = object }

        func string(_ key: String) throws -> String? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let text = value as? String else { throw bad("\"\(key)\" must be a string") }
            return text
        }

        func number(_ key: String) throws -> Double? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let number = value as? NSNumber, number.doubleValue.isFinite else {
                throw bad("\"\(key)\" must be a number")
            }
            return number.doubleValue
        }

        func sport() throws -> String? {
            guard let sport = try string("sport") else { return nil }
            guard (1...32).contains(sport.utf8.count), sport.utf8.allSatisfy({ (97...122).contains($0) || $0 == 95 }) else {
                throw bad("\"sport\" must be a lower-case word such as run, walk or cycle")
            }
            return sport
        }

        func gearID() throws -> String {
            guard let id = try string("id"), GearBook.isValidID(id) else { throw bad("\"id\" (a gear id) is required") }
            return id
        }
    }
}
