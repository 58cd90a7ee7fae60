import Foundation
import Testing
import TestKit

/// An archiver SIGKILLed between a commit and its acknowledgement (issue 48, item 3): the row is
/// in PostgreSQL, the PUBACK never left. Started again on its persistent session, it is sent the
/// same message again by the node and finds it stored: nothing lost, nothing doubled. The kill
/// comes from the archiver itself at exactly that point (`KEEPALIVE_FAULT_ARCHIVE_KILL_AFTER_COMMITS`),
/// which no timing from outside could hit.
extension FleetSuites {
    @Suite struct FleetCommitKillTests {
        static let devices = ["ck01", "ck02", "ck03"]

        @Test("an archiver killed after a commit and before its PUBACK: the message comes again and is stored once")
        func killedBetweenCommitAndAcknowledgement() async throws {
            try await withClusterAndPostgres("fleet-commit-kill") { cluster, postgres, directory in
                try await killedBetweenCommitAndAcknowledgement(cluster: cluster, postgres: postgres, directory: directory)
            }
        }

        private func killedBetweenCommitAndAcknowledgement(
            cluster: FleetCluster, postgres: TestPostgres, directory: TemporaryDirectory
        ) async throws {
            try await cluster.register("archive", password: "pw-archive")
            let deviceTokens = try await cluster.tokenFile(Self.devices, path: directory.file("devices.txt"))
            let passwordFile = try archivePasswordFile(in: directory)
            let archiver = try ArchiverProcess(
                directory: directory.path, clientID: "archive-k", port: cluster.port(1), passwordFile: passwordFile,
                conninfo: postgres.archiverConninfo, cafile: cluster.caFile)
            defer { archiver.stop() }
            try archiver.start(environment: ["KEEPALIVE_FAULT_ARCHIVE_KILL_AFTER_COMMITS": "25"])
            try await archiver.process?.waitForLine(containing: "MQTT connected", timeout: 20)

            let acked = directory.file("acked.tsv")
            let load = try startFleetLoad(cluster: cluster, tokens: deviceTokens, acked: acked, ["--rate", "2", "--seconds", "20"])
            defer { load.stop() }

            // The archiver ends itself by SIGKILL right after its 25th commit.
            let killed = try #require(archiver.process)
            let status = await killed.waitForExit(timeout: 60)
            #expect(status == 128 + SIGKILL, "the archiver did not die by SIGKILL (status \(String(describing: status))):\n\(archiver.log.suffix(2000))")
            let line = try #require(
                killed.text.split(separator: "\n").last { $0.contains("SIGKILL after a commit, before its PUBACK") },
                "no fault-injection line:\n\(killed.text.suffix(2000))")
            let topic = try #require(line.firstMatch(of: /topic=(\S+)/).map { String($0.1) }, "\(line)")
            let seq = try #require(line.firstMatch(of: /seq=(\d+)/).map { String($0.1) }, "\(line)")
            let device = topic.split(separator: "/")[1]
            #expect(try syncQuery(postgres, "SELECT count(*) FROM archive_messages WHERE device = '\(device)' AND seq = \(seq)") == [["1"]],
                    "the message committed before the kill is not in the archive once")

            // Started again without the hook, on its session: the node sends the unacknowledged
            // message again, and the archive finds it there (a duplicate, not a second row).
            try archiver.start()
            try await archiver.process?.waitForLine(containing: "MQTT connected", timeout: 20)
            try await Wait.until(timeout: 30, "the restarted archiver counting the message sent again as a duplicate:\n\(archiver.log.suffix(2000))") {
                archiver.log.matches(of: /\\?"duplicates\\?":(\d+)/).contains { Int($0.1) ?? 0 >= 1 }
            }

            _ = try await load.waitForLine(containing: #""acked": "#, timeout: 120)
            let expected = try acknowledged(in: acked)
            #expect(expected.count >= Self.devices.count * 2 * 15, "too few messages acknowledged: \(expected.count); \(load.text)")
            guard try await expectArchivedExactlyOnce(expected, postgres: postgres, timeout: 60, log: archiver.log) else { return }
            print("fleet: archiver SIGKILLed after committing \(topic) seq \(seq), before its PUBACK; sent again, stored once; \(expected.count) acknowledged messages archived once each")
        }
    }
}
