import Foundation
import Testing
import TestKit

/// Devices with JWTs (deploy/fleet/fleet-jwt.py, cluster.sh with FLEET_JWT_DIR): the nodes hold
/// only the public key and no device account; a Pi bridged with the token
/// `device-credentials.sh add` issues gets its message to the archive; another device's token, an
/// expired one and a made-up one are refused; the readers keep their passwords; a revoked device is
/// cut off (FleetRevocationCheck).
extension FleetSuites {
    @Suite struct FleetJWTTests {
        @Test("a device connects with its token only; the nodes hold no device secret; a revoked one is cut off") func devicesWithTokens() async throws {
            try await withClusterAndPostgres("fleet-jwt", jwt: true) { cluster, postgres, directory in
                try await devicesWithTokens(cluster: cluster, postgres: postgres, directory: directory)
            }
        }

        private func devicesWithTokens(cluster: FleetCluster, postgres: TestPostgres, directory: TemporaryDirectory) async throws {
            let keys = try #require(cluster.jwtDirectory)
            try await cluster.register("archive", password: "pw-archive")
            try await cluster.register("viewer", password: "pw-viewer")
            let viewer = cluster.clientArguments("viewer", "pw-viewer")
            let archiver = try await ArchiverProcess.connected(
                clientID: "archive-jwt", node: 2, cluster: cluster, postgres: postgres, directory: directory)
            defer { archiver.stop() }

            let pi = try await FleetPi(device: "pi-jwt", cluster: cluster, directory: directory)
            defer { pi.stop() }
            let sub = try await MQTTSubscriber(port: cluster.port(3), filter: "keepalive/pi-jwt/#", extraArguments: viewer)
            try await MQTTTools.publish(port: pi.localPort, topic: "keepalive/pi-jwt/status", message: #"{"seq":1,"state":"online"}"#)
            try await sub.waitFor(timeout: 30, "the Pi's message through its bridge, authenticated by its token") { $0.topic.hasSuffix("/status") }
            try await Wait.until(timeout: 30, "the Pi's message in the archive") {
                try syncQuery(postgres, "SELECT count(*) FROM archive_messages WHERE device = 'pi-jwt'").first?.first == "1"
            }

            // No device account on the cluster: only the readers'.
            let users = try await cluster.ctl(1, ["registered_users", FleetCluster.host])
            #expect(Set(users.split(separator: "\n").map(String.init)) == ["archive", "viewer"], "accounts on the nodes: \(users)")

            // Refused: another device's token, an expired token, a made-up one.
            func token(_ device: String, days: String) async throws -> String {
                let made = try await runCommand(
                    "\(Tools.packageRoot)/deploy/fleet/fleet-jwt.py", ["token", keys, device, FleetCluster.host, days])
                return made.output.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let good = try await token("pi-jwt", days: "1")
            for (what, password) in [
                ("its own token", good), ("another device's token", try await token("pi-other", days: "1")),
                ("an expired token", try await token("pi-jwt", days: "-1")), ("a made-up token", good.dropLast(8) + "AAAAAAAA"),
            ] {
                let result = try await runCommand(
                    Tools.mosquittoPub, ["-h", "127.0.0.1", "-p", "\(cluster.port(1))", "-V", "5", "-q", "1", "-i", "pi-jwt-check",
                                         "-u", "pi-jwt", "-P", String(password), "-t", "keepalive/pi-jwt/check", "-m", "{}"]
                        + cluster.tlsArguments)
                if what == "its own token" {
                    #expect(result.status == 0, "\(what) was refused: \(result.output)")
                } else {
                    #expect(result.status != 0, "\(what) was accepted")
                }
            }

            // Revoked: cut off on every node from the moment the command returns; another device not.
            try await FleetRevocationCheck(cluster: cluster, postgres: postgres, directory: directory) { device in
                try await runCommand("\(Tools.packageRoot)/deploy/fleet/fleet-jwt.py", ["token", keys, device, FleetCluster.host, "1"])
                    .output.trimmingCharacters(in: .whitespacesAndNewlines)
            }.run(device: "pi-jwt", other: "pi-keep")
        }
    }
}
