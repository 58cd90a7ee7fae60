import Foundation
import Testing
import TestKit

/// Revoking a JWT device (deploy/fleet/device-credentials.sh revoke, the group "revoked" that
/// ejabberd.yml.in's topic rules consult): from the moment the command returns, the device's next
/// publish is refused on a connection it already holds and on a new one on another node, so
/// nothing more of it is archived; another device goes on being archived.
struct FleetRevocationCheck {
    let cluster: FleetCluster
    let postgres: TestPostgres
    let directory: TemporaryDirectory
    /// `fleet-jwt.py token` for a device, valid a day.
    let token: @Sendable (String) async throws -> String

    func run(device: String, other: String) async throws {
        let deviceToken = try await token(device)
        let otherToken = try await token(other)
        // A connection the device holds through the revocation (as its Pi's bridge would), on
        // node 3: mosquitto_pub reading lines from a FIFO, printing each PUBACK's reason code.
        let fifo = directory.file("held.fifo")
        guard mkfifo(fifo, 0o600) == 0 else { throw WaitTimeout(description: "mkfifo \(fifo): errno \(errno)") }
        let publisher = ([Tools.stdbuf, "-oL", Tools.mosquittoPub, "-l", "-d", "-V", "5", "-q", "1", "-h", "127.0.0.1", "-p", "\(cluster.port(3))",
                          "-i", "\(device)-held", "-u", device, "-P", deviceToken, "-t", "keepalive/\(device)/status"] + cluster.tlsArguments)
            .map { "'\($0)'" }.joined(separator: " ")
        let held = try ManagedProcess(name: "held connection", executable: "/bin/sh", arguments: ["-c", "exec \(publisher) < '\(fifo)'"])
        defer { held.stop() }
        guard let lines = FileHandle(forWritingAtPath: fifo) else { throw WaitTimeout(description: "cannot open \(fifo)") }
        defer { try? lines.close() }
        try lines.write(contentsOf: Data(#"{"seq":2,"state":"online"}"#.utf8 + [0x0A]))
        let accepted = try await held.waitForLine(containing: "received PUBACK (Mid: 1", timeout: 30)
        #expect(accepted.contains("RC:0)"), "before the revocation: \(accepted)")

        func publish(_ who: String, _ password: String, node: Int, seq: Int) async throws -> String {
            try await runCommand(
                Tools.mosquittoPub, ["-d", "-h", "127.0.0.1", "-p", "\(cluster.port(node))", "-V", "5", "-q", "1", "-i", "\(who)-\(seq)",
                                     "-u", who, "-P", password, "-t", "keepalive/\(who)/status", "-m", #"{"seq":\#(seq)}"#] + cluster.tlsArguments).output
        }
        _ = try await publish(other, otherToken, node: 1, seq: 1)

        // Revoked through node 2; the device's token itself stays valid until its exp.
        let started = ContinuousClock.now
        let revoke = try await runCommand(
            "\(Tools.packageRoot)/deploy/fleet/device-credentials.sh", ["revoke", device],
            environment: ["FLEET_CTL": "\(Tools.packageRoot)/deploy/fleet/cluster.sh ctl \(cluster.directory) 2"])
        let returned = ContinuousClock.now
        try #require(revoke.status == 0, "\(revoke.output)")

        // The next publish on the held connection (node 3) is refused.
        try lines.write(contentsOf: Data(#"{"seq":3,"state":"online"}"#.utf8 + [0x0A]))
        let refused = try await held.waitForLine(containing: "received PUBACK (Mid: 2", timeout: 30)
        let cutOff = ContinuousClock.now - returned
        #expect(!refused.contains("RC:0)") && !refused.contains("RC:16)"), "after the revocation, on the connection it held: \(refused)")
        // A new connection on node 1 with the same, unexpired token: connected, its publish refused.
        let again = try await publish(device, deviceToken, node: 1, seq: 4)
        #expect(again.contains("received CONNACK (0)") && again.contains("RC:144"), "a new connection after the revocation: \(again)")
        // The other device is untouched, and only it gets archived from now on.
        let otherAfter = try await publish(other, otherToken, node: 2, seq: 2)
        #expect(otherAfter.contains("RC:0)") || otherAfter.contains("RC:16)"), "\(other) after the revocation: \(otherAfter)")
        try await Wait.until(timeout: 30, "\(other)'s message after the revocation, and \(device)'s before it, in the archive") {
            try syncQuery(postgres, """
                SELECT count(*) FROM archive_messages WHERE (device = '\(other)' AND seq IN (1, 2)) OR (device = '\(device)' AND seq = 2)
                """).first?.first == "3"
        }
        let kept = try await postgres.query("SELECT seq FROM archive_messages WHERE device = '\(device)' ORDER BY seq").compactMap(\.first)
        #expect(kept == ["1", "2"], "\(device)'s archived seqs (3 and 4 were sent after its revocation): \(kept)")
        let listed = try await runCommand(
            "\(Tools.packageRoot)/deploy/fleet/device-credentials.sh", ["revoked"],
            environment: ["FLEET_CTL": "\(Tools.packageRoot)/deploy/fleet/cluster.sh ctl \(cluster.directory) 3"])
        #expect(listed.output.split(separator: "\n").map(String.init) == [device], "revoked: \(listed.output)")
        print("fleet: \(device) revoked (the command took \(returned - started)); its next publish refused \(cutOff) after it returned")
    }
}
