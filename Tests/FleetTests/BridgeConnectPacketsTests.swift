import Foundation
import Testing
import TestKit

/// What a Pi's bridge sends its node on every connect is what the fleet benchmark's simulated
/// devices send (deploy/fleet/fleet_bridge.py reads it from pi-bridge.conf.in): a real mosquitto,
/// configured with the template, bridges into a second mosquitto that logs every packet, and the
/// packets it logs are compared with the simulation's. A connect's cost on the cluster is these
/// packets, so the benchmark's "node CPU per connect" is only a Pi's if they agree.
@Suite struct BridgeConnectPacketsTests {
    @Test("a real mosquitto bridge sends on connect exactly what fleet-load's devices send") func sameAsTheSimulation() async throws {
        let directory = try TemporaryDirectory("bridge-packets")
        let remotePort = Ports.free()
        let remoteConf = try directory.write("remote.conf", """
            listener \(remotePort) 127.0.0.1
            allow_anonymous true
            log_type all
            log_dest stderr
            user root
            """)
        let remote = try ManagedProcess(name: "node stand-in", executable: Tools.mosquitto, arguments: ["-c", remoteConf])
        defer { remote.stop() }
        try await Wait.until(timeout: 10, "the stand-in node to listen") { Ports.isListening(remotePort) }

        let template = try String(contentsOfFile: "\(Tools.packageRoot)/deploy/fleet/pi-bridge.conf.in", encoding: .utf8)
        let localPort = Ports.free()
        let bridgeConf = try directory.write("pi.conf", template
            .replacingOccurrences(of: "@DEVICE@", with: "pi-p")
            .replacingOccurrences(of: "@PASSWORD@", with: "unused")
            .replacingOccurrences(of: "address @NODE1@ @NODE2@", with: "address 127.0.0.1:\(remotePort)")
            .replacingOccurrences(of: "listener 1883 127.0.0.1", with: "listener \(localPort) 127.0.0.1\nuser root")
            .replacingOccurrences(of: "persistence true", with: "persistence false")
            .replacingOccurrences(of: "persistence_location /var/lib/mosquitto/", with: ""))
        let pi = try ManagedProcess(name: "Pi mosquitto", executable: Tools.mosquitto, arguments: ["-c", bridgeConf])
        defer { pi.stop() }
        // The last `topic` line's packet closes the sequence; a PINGREQ can only come after it.
        let lastTopic = try #require(
            template.split(separator: "\n").last { $0.hasPrefix("topic ") }?.split(separator: " ")[1]
                .replacingOccurrences(of: "@DEVICE@", with: "pi-p"))
        try await remote.waitForLine(containing: "\t\(lastTopic)", timeout: 20)

        let real = Self.packets(inLog: remote.lines)
        let simulated = try await Self.simulatedPackets(device: "pi-p")
        #expect(real == simulated, "real bridge:\n\(real.joined(separator: "\n"))\nfleet_bridge.py:\n\(simulated.joined(separator: "\n"))")
        // And the template keeps a connect cheap: no UNSUBSCRIBE, one SUBSCRIBE per wildcard.
        #expect(!real.contains { $0.hasPrefix("unsubscribe") }, "the bridge unsubscribes on connect: \(real)")
        #expect(real.filter { $0.hasPrefix("subscribe") }.count == 3, "subscriptions per connect: \(real)")
    }

    /// The packets in mosquitto's `log_type all` lines, as "will|publish|subscribe|unsubscribe TOPIC …".
    static func packets(inLog lines: [String]) -> [String] {
        var packets: [String] = []
        var pending: String?
        for line in lines {
            let text = line.split(separator: " ", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            if text.hasPrefix("\t"), let kind = pending {
                let topic = text.dropFirst().split(separator: " ").first.map(String.init) ?? ""
                packets.append("\(kind) \(topic)")
                if kind == "will" { pending = nil }
                continue
            }
            pending = nil
            if text.hasPrefix("Will message specified (1 bytes) (r1, q1)") {
                pending = "will"
            } else if text.hasPrefix("Received SUBSCRIBE") {
                pending = "subscribe"
            } else if text.hasPrefix("Received UNSUBSCRIBE") {
                pending = "unsubscribe"
            } else if text.hasPrefix("Received PUBLISH"), let quoted = text.split(separator: "'").dropFirst().first {
                packets.append("publish \(quoted) \(text.contains("q1, r1") ? "q1 r1" : "other")")
            }
        }
        return packets
    }

    /// fleet_bridge.py's will, state publication and on-connect packets for `device`, in the same form.
    static func simulatedPackets(device: String) async throws -> [String] {
        let script = """
            import fleet_bridge as f
            topic = f.bridge_notification_topic("\(device)")
            if topic:
                print("will", topic)
                print("publish", topic, "q1 r1")
            for kind, name, qos in f.bridge_on_connect("\(device)"):
                print(kind, name)
            """
        let result = try await runCommand(
            "/usr/bin/python3", ["-c", script], environment: ["PYTHONPATH": "\(Tools.packageRoot)/deploy/fleet"])
        try #require(result.status == 0, "fleet_bridge.py: \(result.output)")
        return result.output.split(separator: "\n").map(String.init)
    }
}
