import Foundation
import Testing
import TestKit

/// An archiver that moves: its node is SIGKILLed while the other archiver is stopped; it
/// reconnects to another node of `[archive] nodes` within seconds, and what its dead session
/// held (lost with the node, docs/fleet.md) comes back through the gap fill: every acknowledged
/// (device, seq) archived exactly once.
extension FleetSuites {
    @Suite struct FleetMovingArchiverTests {
        static let deviceCount = 10

        @Test("an archiver whose node dies moves to another node and loses nothing") func archiverMoves() async throws {
            try await withClusterAndPostgres("fleet-moving") { cluster, postgres, directory in
                try await archiverMoves(cluster: cluster, postgres: postgres, directory: directory)
            }
        }

        private func archiverMoves(cluster: FleetCluster, postgres: TestPostgres, directory: TemporaryDirectory) async throws {
            let devices = (1...Self.deviceCount).map { String(format: "mov%02d", $0) }
            try await cluster.register("archive", password: "pw-archive")
            let deviceTokens = try await cluster.tokenFile(devices, path: directory.file("devices.txt"))
            let passwordFile = try archivePasswordFile(in: directory)
            // The only archiver running (the other is stopped): on node 1, knowing nodes 2 and 3.
            let archiver = try ArchiverProcess(
                directory: directory.path, clientID: "archive-a", port: cluster.port(1), passwordFile: passwordFile,
                conninfo: postgres.archiverConninfo, nodes: [cluster.port(2), cluster.port(3)], cafile: cluster.caFile)
            defer { archiver.stop() }
            try archiver.start()
            try await archiver.process?.waitForLine(containing: "MQTT connected", timeout: 20)

            let acked = directory.file("acked.tsv")
            let load = try startFleetLoad(cluster: cluster, tokens: deviceTokens, acked: acked, ["--rate", "5", "--seconds", "30"])
            defer { load.stop() }
            try await Wait.until(timeout: 30, "the load under way in the archive before the node dies") {
                Int(try syncQuery(postgres, "SELECT count(*) FROM archive_messages").first?.first ?? "0") ?? 0 >= 200
            }

            let killed = ContinuousClock.now
            try await cluster.killNode(1)
            let elsewhere = [cluster.address(2), cluster.address(3)]
            try await Wait.until(timeout: 30, "archive-a connected to node 2 or 3:\n\(archiver.log.suffix(2000))") {
                archiver.log.split(separator: "\n").contains { line in line.contains("MQTT connected") && elsewhere.contains { line.contains($0) } }
            }
            let moved = ContinuousClock.now - killed
            print("fleet: archive-a reconnected to another node \(moved) after its node was SIGKILLed")
            #expect(moved < .seconds(10), "the archiver took \(moved) to move")

            _ = try await load.waitForLine(containing: #""acked": "#, timeout: 120)
            #expect(!load.text.contains(#""failed": {"mov"#), "the load generator failed: \(load.text)")
            let expected = try acknowledged(in: acked)
            #expect(expected.count > Self.deviceCount * 5 * 20, "too few messages acknowledged: \(expected.count); \(load.text)")
            guard try await expectArchivedExactlyOnce(expected, postgres: postgres, timeout: 120, log: archiver.log) else { return }
            let filled = archiver.log.matches(of: /\\?"filled\\?":(\d+)/).last.map { String($0.1) } ?? "?"
            print("fleet: \(expected.count) acknowledged messages archived once each after the move, \(filled) of them filled from the devices")
        }
    }
}
