import Foundation
import Testing
import TestKit

/// deploy/fleet's cluster and topic rules, tried by real MQTT clients (mosquitto_pub, _sub) with
/// each device's own token: a device publishes only under its own tree, reads only its own
/// query topics (per date and resend by seq), cannot forge or read another device; requests and replies cross nodes with
/// their v5 properties; a revoked device is refused. Over TLS, as every fleet test but one.
extension FleetSuites {
    @Suite struct FleetAccessTests {
        @Test("each device reaches only its own topics, on every node") func eachDeviceReachesOnlyItsOwnTopics() async throws {
            try await withCluster("fleet-access") { cluster, _ in try await checkAccess(cluster) }
        }

        private func checkAccess(_ cluster: FleetCluster) async throws {
            // Readers with their (SCRAM-stored) passwords, devices with their tokens.
            for user in ["viewer", "archive"] { try await cluster.register(user, password: "secret-\(user)") }
            let tokens = ["pi-a": try await cluster.token("pi-a"), "pi-b": try await cluster.token("pi-b")]
            func credentials(_ user: String) -> [String] { cluster.clientArguments(user, tokens[user] ?? "secret-\(user)") }

            // The viewer reads everything, on node 2; pi-a publishes on node 1.
            let viewer = try await MQTTSubscriber(port: cluster.port(2), filter: "keepalive/#", extraArguments: credentials("viewer"))
            try await MQTTTools.publish(port: cluster.port(1), topic: "keepalive/pi-b/status", message: #"{"seq":1,"forged":true}"#,
                                        extraArguments: credentials("pi-a"))
            try await MQTTTools.publish(port: cluster.port(1), topic: "keepalive/pi-a/status", message: #"{"seq":1}"#,
                                        extraArguments: credentials("pi-a"))
            // Same client, same order: once pi-a's own message is through, the forged one would have been too.
            try await viewer.waitFor("pi-a's own status, across nodes") { $0.topic == "keepalive/pi-a/status" }
            #expect(!viewer.messages.contains { $0.topic == "keepalive/pi-b/status" }, "pi-a forged pi-b's status: \(viewer.messages)")

            // pi-b may not read pi-a's data, nor its requests, nor everything.
            for filter in ["keepalive/pi-a/#", "#", "keepalive/+/status", "keepalive/pi-a/selection/+", "keepalive/+/selection/date"] {
                let refused = try await runCommand(
                    Tools.mosquittoSub, ["-h", "127.0.0.1", "-p", String(cluster.port(3)), "-V", "5", "-t", filter, "-W", "3"] + credentials("pi-b"))
                #expect(refused.output.contains("denied"), "pi-b subscribing to \(filter): \(refused.output)")
            }

            // A request from the viewer on node 3 reaches pi-a on node 1 with its response topic and
            // correlation data; pi-a's reply, under reply/pi-a/, comes back to the viewer.
            let requests = try await MQTTSubscriber(
                port: cluster.port(1), filter: "keepalive/pi-a/selection/date", extraArguments: credentials("pi-a"))
            let replies = try await MQTTSubscriber(port: cluster.port(3), filter: "reply/+/viewer/#", extraArguments: credentials("viewer"))
            // pi-b is not a reader: its request to pi-a is dropped; the viewer's after it arrives.
            try await MQTTTools.publish(port: cluster.port(2), topic: "keepalive/pi-a/selection/date", message: "2026-11-01",
                                        extraArguments: credentials("pi-b"))
            try await MQTTTools.publish(
                port: cluster.port(3), topic: "keepalive/pi-a/selection/date", message: "2026-11-24",
                extraArguments: credentials("viewer") + ["-D", "publish", "response-topic", "reply/pi-a/viewer/1", "-D", "publish", "correlation-data", "c42"])
            let request = try await requests.waitFor("the viewer's request at pi-a") { $0.payload == "2026-11-24" }
            #expect(request.correlationData == "c42")
            #expect(!requests.messages.contains { $0.payload == "2026-11-01" }, "pi-b could send pi-a a request")
            // Resend requests by seq (the archive filling its gaps): the archive may ask pi-a, pi-b may not.
            let resends = try await MQTTSubscriber(
                port: cluster.port(1), filter: "keepalive/pi-a/selection/seq", extraArguments: credentials("pi-a"))
            try await MQTTTools.publish(port: cluster.port(2), topic: "keepalive/pi-a/selection/seq", message: #"{"from":1,"to":1}"#,
                                        extraArguments: credentials("pi-b"))
            try await MQTTTools.publish(
                port: cluster.port(3), topic: "keepalive/pi-a/selection/seq", message: #"{"from":5,"to":9}"#,
                extraArguments: credentials("archive") + ["-D", "publish", "response-topic", "reply/pi-a/archive/a-1/seq"])
            let resend = try await resends.waitFor("the archive's resend request at pi-a") { $0.payload.contains("5") }
            #expect(resend.payload == #"{"from":5,"to":9}"#)
            #expect(!resends.messages.contains { $0.payload.contains(#""from":1"#) }, "pi-b could send pi-a a resend request")
            try await MQTTTools.publish(
                port: cluster.port(1), topic: "reply/pi-a/viewer/1", message: #"{"ok":true}"#,
                extraArguments: credentials("pi-a") + ["-D", "publish", "correlation-data", "c42"])
            let reply = try await replies.waitFor("pi-a's reply at the viewer, node 1 to node 3") { $0.topic == "reply/pi-a/viewer/1" }
            #expect(reply.correlationData == "c42")
            // …but pi-a cannot reply as pi-b.
            let forgedReply = try await runCommand(
                Tools.mosquittoPub, ["-h", "127.0.0.1", "-p", String(cluster.port(1)), "-V", "5", "-q", "1", "-t", "reply/pi-b/viewer/1", "-m", "x"]
                    + credentials("pi-a"))
            #expect(forgedReply.output.contains("forbidden") || forgedReply.output.contains("invalid"), "\(forgedReply.output)")

            // A password instead of a token, and a device revoked with deploy/fleet/device-credentials.sh, are refused.
            let wrong = try await runCommand(
                Tools.mosquittoPub, ["-h", "127.0.0.1", "-p", String(cluster.port(1)), "-V", "5", "-t", "keepalive/pi-a/status", "-m", "{}",
                                     "-u", "pi-a", "-P", "guess"] + cluster.tlsArguments)
            #expect(wrong.status != 0 && wrong.output.contains("Not authorized"), "\(wrong.output)")
            let revoke = try await runCommand(
                "\(Tools.packageRoot)/deploy/fleet/device-credentials.sh", ["revoke", "pi-b"],
                environment: ["FLEET_CTL": "\(Tools.packageRoot)/deploy/fleet/cluster.sh ctl \(cluster.directory) 2"])
            #expect(revoke.status == 0, "\(revoke.output)")
            // Its token still logs in (tokens cannot be withdrawn), its publish is refused.
            let revoked = try await runCommand(
                Tools.mosquittoPub, ["-d", "-h", "127.0.0.1", "-p", String(cluster.port(3)), "-V", "5", "-q", "1", "-t", "keepalive/pi-b/status",
                                     "-m", "{}"] + credentials("pi-b"))
            #expect(revoked.output.contains("received PUBACK") && !revoked.output.contains("RC:0)") && !revoked.output.contains("RC:16)"),
                    "\(revoked.output)")
        }
    }
}
