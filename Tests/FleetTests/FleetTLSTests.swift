import Foundation
import Testing
import TestKit

/// The cluster over TLS (deploy/fleet/fleet-ca.sh, cluster.sh with FLEET_TLS_DIR): a plain MQTT
/// connection to a node is refused, a client holding another CA does not connect, a Pi's bridge
/// (the issued config with `bridge_cafile`) and an archiver verify the nodes' certificate and
/// carry a device message into PostgreSQL; PostgreSQL refuses TCP without TLS and an unverified
/// server, the archiver's connections are all TLS with a SCRAM password; tcpdump on the loopback,
/// as a user would run it, sees neither that message nor any password in clear, to the nodes or
/// to PostgreSQL, nor between the nodes (their Erlang distribution runs over TLS).
extension FleetSuites {
    @Suite struct FleetTLSTests {
        static let marker = "cleartext-marker-48"

        @Test("over TLS: plain and wrong-CA connections refused, bridge and archiver verified, nothing in clear") func overTLS() async throws {
            try await withClusterAndPostgres("fleet-tls", tls: true) { cluster, postgres, directory in
                try await overTLS(cluster: cluster, postgres: postgres, directory: directory)
            }
        }

        private func overTLS(cluster: FleetCluster, postgres: TestPostgres, directory: TemporaryDirectory) async throws {
            let tls = try #require(cluster.tlsDirectory)
            try await cluster.register("archive", password: "pw-archive")
            try await cluster.register("viewer", password: "pw-viewer")
            let viewer = ["-u", "viewer", "-P", "pw-viewer"]

            // Refused: plain MQTT, and TLS with a CA that did not sign the nodes' certificate.
            let plain = try await runCommand(
                Tools.mosquittoPub, ["-h", "127.0.0.1", "-p", "\(cluster.port(1))", "-V", "5", "-q", "1", "-t", "keepalive/viewer/x", "-m", "{}"] + viewer)
            #expect(plain.status != 0, "a plain MQTT connection was accepted: \(plain.output)")
            let wrong = directory.file("wrong-ca")
            _ = try await runCommand("\(Tools.packageRoot)/deploy/fleet/fleet-ca.sh", [wrong, "localhost"])
            let wrongCA = try await runCommand(
                Tools.mosquittoPub,
                ["-h", "localhost", "-p", "\(cluster.port(1))", "--cafile", "\(wrong)/ca.pem", "-V", "5", "-q", "1", "-t", "keepalive/viewer/x", "-m", "{}"]
                    + viewer)
            #expect(wrongCA.status != 0, "a client with another CA connected: \(wrongCA.output)")

            try await postgresRefusesPlain(postgres, wrongCA: "\(wrong)/ca.pem")

            // From here on, everything that crosses the loopback to the nodes and PostgreSQL is captured.
            let capture = directory.file("nodes.pcap")
            let ports = ((1...3).map { "port \(cluster.port($0))" } + ["port \(postgres.port)"]).joined(separator: " or ")
            let tcpdump = try ManagedProcess(
                name: "tcpdump", executable: "/usr/bin/tcpdump",
                arguments: ["-i", "lo", "-U", "-w", capture, "tcp and (\(ports))"])
            try await tcpdump.waitForLine(containing: "listening on", timeout: 10)
            // Between the nodes: their Erlang distribution, where a message published on one node
            // travels to the subscribers on the others.
            let distribution = try await cluster.distributionPorts()
            try #require(distribution.count == 3, "the nodes' distribution ports from epmd: \(distribution)")
            let betweenNodes = directory.file("distribution.pcap")
            let distributionDump = try ManagedProcess(
                name: "tcpdump distribution", executable: "/usr/bin/tcpdump",
                arguments: ["-i", "lo", "-U", "-w", betweenNodes, "tcp and (\(distribution.map { "port \($0)" }.joined(separator: " or ")))"])
            try await distributionDump.waitForLine(containing: "listening on", timeout: 10)

            let passwordFile = try archivePasswordFile(in: directory)
            let archiver = try ArchiverProcess(
                directory: directory.path, clientID: "archive-tls", port: cluster.port(2), passwordFile: passwordFile,
                conninfo: postgres.archiverConninfo, cafile: "\(tls)/ca.pem")
            defer { archiver.stop() }
            try archiver.start()
            try await archiver.process?.waitForLine(containing: "MQTT connected", timeout: 20)

            let pi = try await FleetPi(device: "pi-tls", cluster: cluster, directory: directory)
            defer { pi.stop() }
            let issued = try String(contentsOfFile: pi.bridgeFile, encoding: .utf8)
            #expect(issued.contains("bridge_cafile \(tls)/ca.pem") && issued.contains("address localhost:"), "\(issued)")
            let password = try #require(issued.split(separator: "\n").first { $0.hasPrefix("remote_password ") }?.split(separator: " ").last)
            let sub = try await MQTTSubscriber(
                port: cluster.port(3), filter: "keepalive/pi-tls/#", extraArguments: viewer + ["-h", "localhost", "--cafile", "\(tls)/ca.pem"])
            try await MQTTTools.publish(
                port: pi.localPort, topic: "keepalive/pi-tls/status", message: #"{"seq":1,"state":"online","note":"\#(Self.marker)"}"#)
            try await sub.waitFor(timeout: 30, "the Pi's message through its TLS bridge, read over TLS") { $0.payload.contains(Self.marker) }
            try await Wait.until(timeout: 30, "the Pi's message in the archive, through the archiver's TLS connection") {
                try syncQuery(postgres, "SELECT count(*) FROM archive_messages WHERE device = 'pi-tls' AND payload LIKE '%\(Self.marker)%'")
                    .first?.first == "1"
            }

            // Every connection of the archive's role (writer, answering lock) is TLS.
            let sessions = try await postgres.query("""
                SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.usename = 'keepalive'
                """)
            #expect(sessions.first?.first == sessions.first?.last && (Int(sessions.first?.last ?? "") ?? 0) > 0, "archiver sessions (TLS, all): \(sessions)")

            _ = tcpdump.stop(signal: SIGINT)
            _ = distributionDump.stop(signal: SIGINT)
            let between = try Data(contentsOf: URL(fileURLWithPath: betweenNodes))
            #expect(between.range(of: Data([0x17, 0x03, 0x03])) != nil, "no TLS application data between the nodes (\(between.count) bytes)")
            for secret in [Self.marker, String(password)] {
                #expect(between.range(of: Data(secret.utf8)) == nil, "\"\(secret)\" crossed between the nodes in clear")
            }
            let captured = try Data(contentsOf: URL(fileURLWithPath: capture))
            // The capture holds the TLS connections: ClientHellos naming "localhost" (SNI, sent in
            // clear) and encrypted application-data records (type 0x17, version 0x0303).
            #expect(captured.range(of: Data("localhost".utf8)) != nil, "no TLS handshake captured (\(captured.count) bytes)")
            #expect(captured.range(of: Data([0x17, 0x03, 0x03])) != nil, "no TLS application data captured (\(captured.count) bytes)")
            for secret in [Self.marker, String(password), "pw-archive", "pw-viewer", TestPostgres.archiverPassword] {
                #expect(captured.range(of: Data(secret.utf8)) == nil, "\"\(secret)\" crossed the loopback in clear")
            }
            print("fleet: \(captured.count) bytes captured to and from the nodes and PostgreSQL, \(between.count) between the nodes, all TLS, no password or payload in clear")
        }

        /// PostgreSQL over TCP: without TLS no pg_hba line matches; a server the fleet's CA did not
        /// sign is not trusted (`verify-full`); a wrong password is refused; the archivers' own
        /// settings connect, over TLS.
        private func postgresRefusesPlain(_ postgres: TestPostgres, wrongCA: String) async throws {
            let archiver = postgres.archiverConninfo
            func psql(_ conninfo: String) async throws -> (status: Int32, output: String) {
                try await runCommand("/usr/bin/psql", [conninfo, "-At", "-c", "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"])
            }
            let good = try await psql(archiver)
            #expect(good.status == 0 && good.output.hasPrefix("t"), "the archivers' conninfo over TLS: \(good.output)")
            let plain = try await psql(archiver.replacingOccurrences(of: "sslmode=verify-full", with: "sslmode=disable"))
            #expect(plain.status != 0 && plain.output.contains("no encryption"), "a plain TCP connection to PostgreSQL: \(plain.output)")
            let wrongCAfile = try await psql(archiver.replacingOccurrences(of: "sslrootcert=\(postgres.tlsDirectory ?? "")/ca.pem", with: "sslrootcert=\(wrongCA)"))
            #expect(wrongCAfile.status != 0 && wrongCAfile.output.contains("certificate verify failed"), "another CA: \(wrongCAfile.output)")
            let wrongPassword = try await psql(archiver.replacingOccurrences(of: "passfile=\(postgres.directory)/archiver.pgpass", with: "password=guess"))
            #expect(wrongPassword.status != 0 && wrongPassword.output.contains("password authentication failed"), "a wrong password: \(wrongPassword.output)")
        }
    }
}
