import Foundation
import Testing
import TestKit

/// The archive fills its seq gaps from a real agent's kept messages (`[store] keep_published_h`,
/// `selection/seq`). The gap is made by deleting archived rows in PostgreSQL: what ejabberd
/// drops after a node's death cannot be produced on demand, and to the archive a deleted row
/// and a message that never came are the same missing seq.
extension FleetSuites {
    @Suite struct FleetGapFillTests {
        @Test("a gap in the archive is filled from the agent, byte for byte") func aGapIsFilledFromTheAgentByteForByte() async throws {
            try await withClusterAndPostgres("fleet-gaps") { cluster, postgres, directory in
                try await fillAGap(cluster: cluster, postgres: postgres, directory: directory)
            }
        }

        private func fillAGap(cluster: FleetCluster, postgres: TestPostgres, directory: TemporaryDirectory) async throws {
            let device = "pi-gaps"
            try await cluster.register("archive", password: "pw-archive")
            try await cluster.register("viewer", password: "pw-viewer")
            let pi = try await FleetPi(device: device, cluster: cluster, directory: directory)
            defer { pi.stop() }
            let archiver = try await ArchiverProcess.connected(
                clientID: "archive-a", node: 3, cluster: cluster, postgres: postgres, directory: directory)
            defer { archiver.stop() }
            let statuses = try await MQTTSubscriber(
                port: cluster.port(3), filter: "keepalive/archive/status/#", extraArguments: cluster.clientArguments("viewer", "pw-viewer"))

            let agent = try AgentProcess(
                brokerPort: pi.localPort, deviceID: device, extraConfig: """
                    [hr]
                    transport = "none"
                    [query]
                    reply_topics = ["reply/\(device)/#"]
                    [schedule]
                    status_interval_s = 1
                    [homeassistant]
                    enabled = false
                    """, directory: try TemporaryDirectory("fleet-gap-agent"))
            defer { agent.stop() }

            // A dozen of the agent's messages archived; four in the middle are then "lost".
            try await Wait.until(timeout: 60, "a dozen of the agent's messages in the archive") {
                try syncQuery(postgres, "SELECT count(*) FROM archive_messages WHERE device = '\(device)'").first?.first
                    .flatMap { Int($0) } ?? 0 >= 12
            }
            let rows = try await postgres.query(
                "SELECT seq, topic, payload FROM archive_messages WHERE device = '\(device)' ORDER BY seq LIMIT 12")
            let lost = Array(rows[4..<8])
            let seqs = lost.map { $0[0] }.joined(separator: ",")
            _ = try await postgres.query("DELETE FROM archive_messages WHERE device = '\(device)' AND seq IN (\(seqs))")

            try await Wait.until(timeout: 60, "the four deleted seqs (\(seqs)) back in the archive; archiver:\n\(archiver.log.suffix(2000))") {
                try syncQuery(postgres, "SELECT count(*) FROM archive_messages WHERE device = '\(device)' AND seq IN (\(seqs))").first?.first == "4"
            }
            let back = try await postgres.query(
                "SELECT seq, topic, payload FROM archive_messages WHERE device = '\(device)' AND seq IN (\(seqs)) ORDER BY seq")
            #expect(back == lost, "not as first archived: \(back) vs \(lost)")
            try await statuses.waitFor(timeout: 30, "the archive's status counting the four filled") { message in
                guard let gaps = message.json?["gaps"] as? [String: Any] else { return false }
                return (gaps["filled"] as? Int ?? 0) >= 4 && gaps["missing"] as? Int == 0
            }
        }
    }
}
