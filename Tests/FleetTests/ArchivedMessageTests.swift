import Foundation
import Testing

@testable import Archive

/// What the archive stores and what it counts and drops, message by message (no servers).
@Suite struct ArchivedMessageTests {
    private func parse(_ topic: String, _ payload: String) -> Result<ArchivedMessage, ArchivedMessage.Rejection> {
        ArchivedMessage.parse(topic: topic, payload: Array(payload.utf8), prefix: "keepalive")
    }

    @Test("the agent's messages are kept with their kind") func theAgentsMessagesAreKeptWithTheirKind() throws {
        let cases: [(String, ArchivedMessage.Kind)] = [
            ("keepalive/pi/location", .location), ("keepalive/pi/status", .status), ("keepalive/pi/health/today", .today),
            ("keepalive/pi/health/daily/2026-11-24", .daily), ("keepalive/pi/event/workout", .workout),
            ("keepalive/pi/workout/last", .workout), ("keepalive/pi/event/gear", .event), ("keepalive/pi/gear/pegasus", .gear),
            ("keepalive/pi/cmd/result", .result),
        ]
        for (topic, kind) in cases {
            let message = try parse(topic, #"{"seq":1,"x":true}"#).get()
            #expect(message.kind == kind, "\(topic)")
            #expect(message.device == "pi" && message.seq == 1 && message.payload == #"{"seq":1,"x":true}"#)
        }
        #expect(try parse("keepalive/pi/health/daily/2026-11-24", #"{"seq":0}"#).get().day == "2026-11-24")
    }

    @Test("what is not data is counted by reason, never stored") func whatIsNotDataIsCountedByReason() {
        let cases: [(String, String, ArchivedMessage.Rejection)] = [
            ("other/pi/status", #"{"seq":1}"#, .foreign), ("keepalive//status", #"{"seq":1}"#, .foreign),
            ("keepalive/pi", #"{"seq":1}"#, .foreign),
            ("keepalive/pi/selection/date", "2026-11-24", .request), ("keepalive/pi/cmd/gear", #"{"op":"list"}"#, .request),
            ("keepalive/archive/status/a", #"{"seq":1}"#, .archive),
            ("keepalive/pi/bridge/state", "1", .noSeq), ("keepalive/pi/status", "{not json", .malformed),
            ("keepalive/pi/status", #"{"state":"online"}"#, .noSeq), ("keepalive/pi/status", #"{"seq":true}"#, .malformed),
            ("keepalive/pi/status", #"{"seq":2.5}"#, .malformed), ("keepalive/pi/status", #"{"seq":-1}"#, .malformed),
            ("keepalive/pi/status", #"{"seq":"7"}"#, .malformed), ("keepalive/pi/status", "[1,2]", .malformed),
            ("keepalive/pi/status", "{\"seq\":1,\"a\":\"\u{0}\"}", .malformed),
        ]
        for (topic, payload, reason) in cases {
            guard case .failure(let rejection) = parse(topic, payload) else {
                Issue.record("\(topic) \(payload) was kept")
                continue
            }
            #expect(rejection == reason, "\(topic) \(payload)")
        }
        #expect(throws: ArchivedMessage.Rejection.malformed) {
            try ArchivedMessage.parse(topic: "keepalive/pi/status", payload: [0x7B, 0xFF, 0x7D], prefix: "keepalive").get()
        }
    }

    @Test("only plausible dates reach the database") func onlyPlausibleDatesReachTheDatabase() {
        #expect(ArchiveDatabase.validDate("2026-11-24") == "2026-11-24")
        for text in ["2026-13-01", "2026-11-24x", "24-11-2026", "'; DROP", ""] { #expect(ArchiveDatabase.validDate(text) == nil, "\(text)") }
    }

    @Test("transient PostgreSQL errors are waited out") func transientPostgresErrorsAreWaitedOut() {
        for state in ["08006", "53100", "57P01", "40001", "25006"] { #expect(PostgresError.isTransient(sqlState: state), "\(state)") }
        for state in ["22021", "23505", "42P01", ""] { #expect(!PostgresError.isTransient(sqlState: state), "\(state)") }
    }
}
