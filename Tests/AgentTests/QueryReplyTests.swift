import Foundation
import Testing
import TestKit

@testable import Store

/// One agent answering per-date queries for a stored past day (QueryTests.Setup), asked once in
/// every way below; each test states one claim on the replies. The scenario stops the agent and
/// the broker before its outcome is handed out.
@Suite("Queries: a day's reply", .serialized)
struct QueryReplyTests {
    struct Outcome: Sendable {
        let day: String
        let heartRates: Int
        let firstTst: Int
        let lastTst: Int
        /// The reply to a plain request for the day, as mosquitto_rr printed it.
        let text: String
        let fromAggregate: Result<String, any Error>
        let emptyDay: Result<String, any Error>
        let trackAndHeartRate: Result<String, any Error>
        let everyFix: Result<String, any Error>
        let commandLine: (status: Int32?, output: String, errors: String)
        let futureDate: (status: Int32?, output: String, errors: String)
        let afterPruning: Result<String, any Error>
        let exitStatus: Int32?
    }

    static let outcome = Task { try await scenario() }

    static func scenario() async throws -> Outcome {
        let setup = try await QueryTests.Setup.make()
        defer { setup.agent.kill9(); setup.broker.stop() }
        let text = try await setup.request("\(setup.day)", extra: ["-D", "publish", "correlation-data", "r1"])

        // The finished day's aggregate keeps its first and last fix: the same reply from that one
        // row, and still after the raw fixes are pruned.
        let storePath = setup.agent.storePath
        let fromAggregate = await captured {
            try await Wait.until(timeout: 20, "the day's final aggregate with its first and last fix") {
                let reader = try StoreReader(path: storePath)
                return try reader.read { try $0.dayAggregate(date: setup.day.description) }?.lastFix != nil
            }
            return try await setup.request("\(setup.day)")
        }
        // A day without data is still ok.
        let empty = await captured { try await setup.request("\(setup.day.previous)") }
        // With track and hr: 5-minute points and per-minute heart rate.
        let full = await captured { try await setup.request(#"{"date":"\#(setup.day)","include":["health","location","track","hr"]}"#) }
        let everyFix = await captured { try await setup.request(#"{"date":"\#(setup.day)","include":["track"],"track":"full"}"#) }

        // The command line, while the agent runs, prints the bytes the requester got.
        let cli = try await setup.query(["query", "\(setup.day)"])
        let future = try await setup.query(["query", "\(LocalDay(containing: Date(), timeZone: QueryTests.utc).next)"])

        do {
            let db = try SQLiteConnection(path: storePath)
            try db.execute("DELETE FROM fix")  // as retention prunes raw rows
        }
        let pruned = await captured { try await setup.request("\(setup.day)") }
        return Outcome(
            day: setup.day.description, heartRates: setup.heartRates.count, firstTst: Int(setup.fixes[0].timeMs / 1000),
            lastTst: Int(setup.fixes[3599].timeMs / 1000), text: text, fromAggregate: fromAggregate, emptyDay: empty,
            trackAndHeartRate: full, everyFix: everyFix, commandLine: cli, futureDate: future, afterPruning: pruned,
            exitStatus: setup.agent.stop())
    }

    static func object(_ text: String) -> [String: Any] { QueryTests.object(text) }

    @Test("mosquitto_rr gets the day's health and location")
    func requestResponse() async throws {
        let outcome = try await Self.outcome.value
        let reply = Self.object(outcome.text)
        #expect(reply["ok"] as? Bool == true, "\(outcome.text)")
        #expect(reply["date"] as? String == outcome.day)
        #expect(reply["tz"] as? String == "UTC")
        #expect(reply["has_data"] as? Bool == true)
        let health = try #require(reply["health"] as? [String: Any])
        #expect((health["heart_rate"] as? [String: Any])?["samples"] as? Int == outcome.heartRates)
        #expect((health["location"] as? [String: Any])?["fixes"] as? Int == 3600)
        let distance = (health["location"] as? [String: Any])?["distance_m"] as? Double ?? 0
        #expect(abs(distance - 3599 * 1.4) < 3599 * 1.4 * 0.02, "a straight 5 km walk measured \(distance) m")
        let location = try #require(reply["location"] as? [String: Any])
        #expect(location["fixes"] as? Int == 3600)
        #expect((location["first"] as? [String: Any])?["tst"] as? Int == outcome.firstTst)
        #expect((location["last"] as? [String: Any])?["tst"] as? Int == outcome.lastTst)
        #expect(reply["track"] == nil && reply["hr"] == nil, "only what was asked for")
    }

    @Test("a finished day's reply from its stored aggregate row is the same")
    func replyFromAggregate() async throws {
        let outcome = try await Self.outcome.value
        let location = try #require(Self.object(outcome.text)["location"] as? [String: Any])
        let fromAggregate = Self.object(try outcome.fromAggregate.get())
        #expect(fromAggregate["location"] as? NSDictionary == location as NSDictionary)
    }

    @Test("a finished day's reply is still the same after its raw fixes are pruned")
    func replyAfterPruning() async throws {
        let outcome = try await Self.outcome.value
        let location = try #require(Self.object(outcome.text)["location"] as? [String: Any])
        let pruned = Self.object(try outcome.afterPruning.get())
        #expect(pruned["location"] as? NSDictionary == location as NSDictionary, "\(pruned)")
    }

    @Test("a day without data is still answered ok")
    func emptyDay() async throws {
        let empty = Self.object(try await Self.outcome.value.emptyDay.get())
        #expect(empty["ok"] as? Bool == true && empty["has_data"] as? Bool == false)
    }

    @Test("track and hr give 5-minute points with altitude and per-minute heart rate")
    func trackAndHeartRate() async throws {
        let full = Self.object(try await Self.outcome.value.trackAndHeartRate.get())
        #expect((full["track"] as? [[String: Any]])?.count == 12)
        #expect((full["track"] as? [[String: Any]])?.first?["alt"] as? Int == 35)
        #expect((full["hr"] as? [[String: Any]])?.count == 60)
    }

    @Test("track full gives every fix")
    func everyFix() async throws {
        let everyFix = Self.object(try await Self.outcome.value.everyFix.get())
        #expect((everyFix["track"] as? [[String: Any]])?.count == 3600)
    }

    @Test("`keepalive query` prints exactly the reply mosquitto_rr got, while the agent runs")
    func commandLineSameReply() async throws {
        let outcome = try await Self.outcome.value
        #expect(outcome.commandLine.status == 0, "\(outcome.commandLine.errors)")
        #expect(outcome.commandLine.output == outcome.text + "\n")
    }

    @Test("`keepalive query` refuses a date after today with future_date")
    func commandLineFutureDate() async throws {
        let future = try await Self.outcome.value.futureDate
        #expect(future.status == 1)
        #expect(Self.object(future.output)["error"].flatMap { ($0 as? [String: Any])?["code"] as? String } == "future_date")
    }

    @Test("the agent stops cleanly (exit 0) after answering")
    func cleanStop() async throws {
        #expect(try await Self.outcome.value.exitStatus == 0)
    }
}
