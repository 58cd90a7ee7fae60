import Foundation
import Testing
import TestKit

@testable import Store

/// A real Home Assistant (2024.3.3, scripts/homeassistant/fleet_check.py) connected to node 3 of
/// the cluster with the `viewer` account, while two real agents publish through their Pis'
/// bridges into node 1: the discovery configs retained on node 1 are not on node 3, and Home
/// Assistant still ends up with every device and every entity its agent announced, because its
/// birth message reaches each Pi and the agent announces again, live (docs/fleet.md).
///
/// The one fleet test whose cluster speaks plain MQTT: Home Assistant's MQTT integration takes a
/// CA only as a file uploaded in its config flow's advanced options, which
/// scripts/homeassistant/fleet_check.py does not drive; what is tested here is discovery across
/// nodes, and the nodes' TLS listener and the Pis' verifying bridges are the other tests'.
extension FleetSuites {
    @Suite struct FleetHomeAssistantTests {
        static let devices = ["piha1", "piha2"]

        @Test("Home Assistant on one node sees every device bridged into another") func homeAssistantOnOneNodeSeesEveryDevice() async throws {
            let directory = try TemporaryDirectory("fleet-ha")
            chmod(directory.path, 0o755)
            let cluster = FleetCluster(directory: directory.file("cluster"), basePort: freeNodePorts())
            try await cluster.run { try await seeEveryDevice(cluster: cluster, directory: directory) }
        }

        private func seeEveryDevice(cluster: FleetCluster, directory: TemporaryDirectory) async throws {
            try await cluster.register("viewer", password: "pw-viewer")
            var pis: [FleetPi] = []
            var agents: [AgentProcess] = []
            defer {
                agents.forEach { $0.stop() }
                pis.forEach { $0.stop() }
            }
            for device in Self.devices {
                let pi = try await FleetPi(device: device, cluster: cluster, directory: directory)
                pis.append(pi)
                agents.append(try AgentProcess(
                    brokerPort: pi.localPort, deviceID: device,
                    // A heart-rate bridge configured (no strap sends): its entities are announced too.
                    extraConfig: "[hr]\ntransport = \"udp\"\nudp_port = \(Ports.free())\n[schedule]\nstatus_interval_s = 2\n[homeassistant]\nenabled = true\n",
                    directory: try TemporaryDirectory("fleet-ha-\(device)"),
                    // Home Assistant's birth may come within a minute of the start announcement.
                    environment: ["KEEPALIVE_HA_REANNOUNCE_MIN_S": "2"]))
            }
            // What each agent announced, from its own store (delivered configs are kept there):
            // every config topic, delivered to its Pi's broker and so bridged to node 1.
            func count(_ sql: String, in path: String) throws -> Int {
                let db = try SQLiteConnection(path: path, readOnly: true)  // outlives its statement
                let statement = try db.statement(sql: sql)
                defer { statement.reset() }
                return try statement.step() ? Int(statement.int64(0)) : 0
            }
            var announced: [String: Int] = [:]
            for agent in agents {
                try await agent.process!.waitForLine(containing: "announced the device to Home Assistant", timeout: 30)
                let configs = "SELECT count(DISTINCT topic) FROM outbox WHERE topic LIKE 'homeassistant/%/keepalive_\(agent.deviceID)/%/config' AND length(payload) > 0"
                let pending = "SELECT count(*) FROM outbox WHERE topic LIKE 'homeassistant/%' AND delivered = 0"
                try await Wait.until(timeout: 30, "\(agent.deviceID)'s discovery configs delivered to its Pi; agent:\n\(agent.log.suffix(1500))") {
                    // The file and its tables appear once the agent has started.
                    (try? count(configs, in: agent.storePath)) ?? 0 > 0 && (try? count(pending, in: agent.storePath)) == 0
                }
                announced[agent.deviceID] = try count(configs, in: agent.storePath)
            }

            let python = try await runCommand(
                "\(Tools.packageRoot)/scripts/python-venv.sh", ["\(Tools.packageRoot)/scripts/homeassistant/requirements.txt", "homeassistant"],
                timeout: 1200)
            try #require(python.status == 0, "no Home Assistant venv: \(python.output)")
            let interpreter = try #require(python.output.split(separator: "\n").last.map(String.init))
            let check = try ManagedProcess(
                name: "fleet-ha", executable: interpreter,
                arguments: ["\(Tools.packageRoot)/scripts/homeassistant/fleet_check.py", "--port", String(cluster.port(3)),
                            "--username", "viewer", "--password", "pw-viewer"]
                    + announced.sorted { $0.key < $1.key }.flatMap { ["--device", "\($0.key)=\($0.value)"] },
                environment: ["PYTHONDONTWRITEBYTECODE": "1"])
            let status = await check.waitForExit(timeout: 300)
            #expect(status == 0, "fleet_check.py failed (\(String(describing: status))):\n\(check.text.suffix(6000))")
            // The mechanism: the configs came again, live, on Home Assistant's birth (node 3 holds none retained).
            for agent in agents {
                let births = agent.process?.lines.filter { $0.contains("announced the device to Home Assistant") && $0.contains("Home Assistant online") }
                #expect(births?.isEmpty == false, "\(agent.deviceID) did not announce again on Home Assistant's birth:\n\(agent.log.suffix(2000))")
            }
            print(check.lines.filter { $0.hasPrefix("fleet-ha") }.joined(separator: "\n"))
        }
    }
}
