import Foundation
import Testing
import TestKit

/// One reply per request to the archive, however many archivers run: two archivers on
/// different nodes each receive every per-date query (ejabberd 23.01 has no shared
/// subscriptions); only the one holding the PostgreSQL advisory lock answers, and when it is
/// SIGKILLed the other takes the lock over within seconds and answers alone.
extension FleetSuites {
    @Suite struct FleetAnswerTests {
        static let device = "pi-kept"
        static let day = "2026-01-02"
        static let requests = 10

        @Test("two archivers give one reply per request, also after the answering one is killed") func oneReplyPerRequest() async throws {
            try await withClusterAndPostgres("fleet-answer") { cluster, postgres, directory in
                try await oneReplyPerRequest(cluster: cluster, postgres: postgres, directory: directory)
            }
        }

        private func oneReplyPerRequest(cluster: FleetCluster, postgres: TestPostgres, directory: TemporaryDirectory) async throws {
            try await cluster.register("archive", password: "pw-archive")
            try await cluster.register("viewer", password: "pw-viewer")
            let viewer = cluster.clientArguments("viewer", "pw-viewer")
            let statuses = try await MQTTSubscriber(port: cluster.port(3), filter: "keepalive/archive/status/#", extraArguments: viewer)
            let replies = try await MQTTSubscriber(port: cluster.port(3), filter: "reply/archive/viewer/#", extraArguments: viewer)
            var archivers: [String: ArchiverProcess] = [:]
            for (clientID, node) in [("archive-a", 1), ("archive-b", 2)] {
                archivers[clientID] = try await ArchiverProcess.connected(
                    clientID: clientID, node: node, cluster: cluster, postgres: postgres, directory: directory)
            }
            defer { archivers.values.forEach { $0.stop() } }

            // A kept day (the archive stores the device's reply byte for byte; any text will do here).
            let body = #"{"ok":true,"date":"\#(Self.day)","kept":1}"#
            try await Wait.until(timeout: 30, "the archive's tables") {
                try syncQuery(postgres, "SELECT to_regclass('archive_days') IS NOT NULL").first?.first == "t"
            }
            _ = try await postgres.query(
                "INSERT INTO archive_days (device, day, body, source_seq) VALUES ('\(Self.device)', '\(Self.day)', '\(body)', 1)")

            let first = try await holder(postgres, not: nil)
            try await askAndCount(round: 1, cluster: cluster, replies: replies, statuses: statuses, answering: first, body: body, viewer: viewer)

            // The answering archiver dies; the other takes the lock over and answers alone.
            let killed = ContinuousClock.now
            try #require(archivers[first] != nil, "the lock is held by \(first), not an archiver of this test")
            archivers[first]?.kill9()
            let second = try await holder(postgres, not: first)
            let takeover = ContinuousClock.now - killed
            print("fleet: \(second) took the answering lock over \(takeover) after \(first) was SIGKILLed")
            #expect(takeover < .seconds(5), "the answering lock was taken over only after \(takeover)")
            try await askAndCount(round: 2, cluster: cluster, replies: replies, statuses: statuses, answering: second, body: body, viewer: viewer)
        }

        /// The client id of the archiver holding the answering lock, once one other than `previous` does.
        private func holder(_ postgres: TestPostgres, not previous: String?) async throws -> String {
            var found = ""
            try await Wait.until(timeout: 30, "an archiver other than \(previous ?? "none") holding the answering lock") {
                let rows = try syncQuery(postgres, """
                    SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                    WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = 1801519105 AND l.objsubid = 1
                    """)
                found = rows.first?.first.map { $0.replacingOccurrences(of: "keepalive archive ", with: "") } ?? ""
                return !found.isEmpty && found != previous
            }
            return found
        }

        /// Sends `requests` queries from node 3, each with its own response topic; each is answered
        /// exactly once, by `answering`: the other archiver's own counters say it received and left
        /// every one, the answering one's that it answered each once.
        private func askAndCount(
            round: Int, cluster: FleetCluster, replies: MQTTSubscriber, statuses: MQTTSubscriber, answering: String, body: String,
            viewer: [String]
        ) async throws {
            let topics = (1...Self.requests).map { "reply/archive/viewer/\(round)-\($0)" }
            for topic in topics {
                try await MQTTTools.publish(
                    port: cluster.port(3), topic: "keepalive/archive/\(Self.device)/selection/date", message: Self.day,
                    extraArguments: viewer + ["-D", "publish", "response-topic", topic, "-D", "publish", "correlation-data", topic])
            }
            let got = try await replies.waitFor(count: topics.count, timeout: 30, "round \(round)'s replies") { topics.contains($0.topic) }
            try await statuses.waitFor(timeout: 30, "\(answering)'s status with \(Self.requests) answered") { message in
                guard message.topic.hasSuffix("/\(answering)"), let queries = message.json?["queries"] as? [String: Any] else { return false }
                return queries["answered"] as? Int ?? 0 >= Self.requests
            }
            if round == 1 {
                let other = answering == "archive-a" ? "archive-b" : "archive-a"
                try await statuses.waitFor(timeout: 30, "\(other)'s status leaving every request to \(answering)") { message in
                    guard message.topic.hasSuffix("/\(other)"), let queries = message.json?["queries"] as? [String: Any] else { return false }
                    return queries["left_to_other"] as? Int == Self.requests && queries["answered"] as? Int == 0
                }
            }
            let answered = statuses.messages.last { $0.topic.hasSuffix("/\(answering)") }?.json?["queries"] as? [String: Any]
            #expect(answered?["answered"] as? Int == Self.requests, "\(answering) answered \(answered ?? [:]), not once per request")
            let now = replies.messages.filter { topics.contains($0.topic) }
            #expect(now.count == topics.count, "\(now.count) replies to \(topics.count) requests: \(now.map(\.topic))")
            #expect(Set(got.map(\.topic)) == Set(topics))
            #expect(got.allSatisfy { $0.payload == body && $0.correlationData == $0.topic }, "\(got)")
        }
    }
}
