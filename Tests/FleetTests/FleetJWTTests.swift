import Foundation
import Testing
import TestKit

/// Devices with JWTs only (deploy/fleet/fleet-jwt.py; every fleet cluster): the nodes hold only
/// the public key and no device account; a Pi bridged with the token `device-credentials.sh add`
/// issues gets its message to the archive; another device's token, an expired one, a made-up one
/// and a password are refused; `device-credentials.sh renew` puts a fresh token that logs in into
/// the bridge file; the readers keep their (SCRAM) passwords; a revoked device is cut off
/// (FleetRevocationCheck).
extension FleetSuites {
    @Suite struct FleetJWTTests {
        @Test("a device connects with its token only; the nodes hold no device secret; a revoked one is cut off") func devicesWithTokens() async throws {
            try await withClusterAndPostgres("fleet-jwt") { cluster, postgres, directory in
                try await devicesWithTokens(cluster: cluster, postgres: postgres, directory: directory)
            }
        }

        private func devicesWithTokens(cluster: FleetCluster, postgres: TestPostgres, directory: TemporaryDirectory) async throws {
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

            // Renewed: the bridge file's remote_password is a fresh token, and it logs in (below).
            func bridgeToken() throws -> String {
                try String(contentsOfFile: pi.bridgeFile, encoding: .utf8).split(separator: "\n")
                    .first { $0.hasPrefix("remote_password ") }.map { String($0.dropFirst("remote_password ".count)) } ?? ""
            }
            let issued = try bridgeToken()
            let renew = try await runCommand(
                "\(Tools.packageRoot)/deploy/fleet/device-credentials.sh", ["renew", "pi-jwt", pi.bridgeFile],
                environment: ["FLEET_JWT_DIR": cluster.jwtDirectory])
            try #require(renew.status == 0, "\(renew.output)")
            let renewed = try bridgeToken()
            #expect(renewed.split(separator: ".").count == 3 && renewed != issued, "the renewed bridge file: \(renewed), issued \(issued)")

            // Refused: another device's token, an expired token, a made-up one, a password.
            let good = try await cluster.token("pi-jwt")
            try await cluster.register("pi-pw", password: "pw-device")
            for (what, user, password) in [
                ("its own token", "pi-jwt", good), ("its renewed token", "pi-jwt", renewed),
                ("another device's token", "pi-jwt", try await cluster.token("pi-other")),
                ("an expired token", "pi-jwt", try await cluster.token("pi-jwt", days: "-1")),
                ("a made-up token", "pi-jwt", String(good.dropLast(8) + "AAAAAAAA")),
                ("a device's password", "pi-pw", "pw-device"),
            ] {
                let result = try await runCommand(
                    Tools.mosquittoPub, ["-h", "127.0.0.1", "-p", "\(cluster.port(1))", "-V", "5", "-q", "1", "-i", "pi-jwt-check",
                                         "-u", user, "-P", password, "-t", "keepalive/pi-jwt/check", "-m", "{}"]
                        + cluster.tlsArguments)
                if what.hasPrefix("its ") {
                    #expect(result.status == 0, "\(what) was refused: \(result.output)")
                } else {
                    #expect(result.status != 0, "\(what) was accepted")
                }
            }

            // Revoked: cut off on every node from the moment the command returns; another device not.
            try await FleetRevocationCheck(cluster: cluster, postgres: postgres, directory: directory) { device in
                try await cluster.token(device)
            }.run(device: "pi-jwt", other: "pi-keep")
        }
    }
}
