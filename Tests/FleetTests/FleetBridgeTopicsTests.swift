import Foundation
import Testing
import TestKit

/// A Pi's bridge (the issued pi-bridge.conf.in: one wildcard SUBSCRIBE for its requests, one for
/// its commands) on a TLS cluster: each request and command a reader sends reaches the Pi once,
/// and the Pi's own results, which match those wildcards, reach the fleet once and never come
/// back to the Pi (the bridge subscribes with MQTT v5 no-local, and ejabberd honours it).
extension FleetSuites {
    @Suite struct FleetBridgeTopicsTests {
        @Test("a Pi's bridge takes in its requests and commands once, and its own results never come back") func inOnceAndNoEcho() async throws {
            try await withCluster("fleet-bridge-topics") { cluster, directory in try await inOnceAndNoEcho(cluster, directory: directory) }
        }

        private func inOnceAndNoEcho(_ cluster: FleetCluster, directory: TemporaryDirectory) async throws {
            try await cluster.register("viewer", password: "pw-viewer")
            let viewer = cluster.clientArguments("viewer", "pw-viewer")
            let device = "pi-topics"
            let pi = try await FleetPi(device: device, cluster: cluster, directory: directory)
            defer { pi.stop() }
            let onThePi = try await MQTTSubscriber(port: pi.localPort, filter: "keepalive/\(device)/#")
            defer { onThePi.stop() }
            let onTheFleet = try await MQTTSubscriber(port: cluster.port(3), filter: "keepalive/\(device)/#", extraArguments: viewer)
            defer { onTheFleet.stop() }
            // The bridge is up once something the Pi publishes reaches node 3.
            try await MQTTTools.publish(port: pi.localPort, topic: "keepalive/\(device)/status", message: #"{"seq":1}"#)
            try await onTheFleet.waitFor(timeout: 30, "the Pi's status through its bridge") { $0.topic.hasSuffix("/status") }

            // In: what readers may send a device, from node 3 to the Pi bridged into node 1.
            let requests = [("selection/date", "2026-11-24"), ("selection/seq", #"{"from":1,"to":1}"#),
                            ("cmd/workout", #"{"op":"list"}"#), ("cmd/gear", #"{"op":"list"}"#)]
            for (suffix, body) in requests {
                try await MQTTTools.publish(port: cluster.port(3), topic: "keepalive/\(device)/\(suffix)", message: body, extraArguments: viewer)
                try await onThePi.waitFor(timeout: 20, "\(suffix) on the Pi") { $0.topic.hasSuffix("/\(suffix)") && $0.payload == body }
            }

            // Out: the agent's results, under the same wildcards.
            for suffix in ["selection/result", "cmd/result"] {
                try await MQTTTools.publish(port: pi.localPort, topic: "keepalive/\(device)/\(suffix)", message: #"{"ok":true}"#)
                try await onTheFleet.waitFor(timeout: 20, "\(suffix) on the fleet") { $0.topic.hasSuffix("/\(suffix)") }
            }
            // A last request, sent after the fleet had both results: had the node sent either back
            // to the Pi's session, it would have done so before this request, on the same session.
            try await MQTTTools.publish(port: cluster.port(3), topic: "keepalive/\(device)/selection/date", message: "last", extraArguments: viewer)
            try await onThePi.waitFor(timeout: 20, "the last request on the Pi") { $0.payload == "last" }

            for (suffix, body) in requests + [("selection/result", #"{"ok":true}"#), ("cmd/result", #"{"ok":true}"#)] {
                let copies = onThePi.messages.filter { $0.topic == "keepalive/\(device)/\(suffix)" && $0.payload == body }.count
                #expect(copies == 1, "\(suffix) on the Pi \(copies) times: \(onThePi.messages)")
            }
            for suffix in ["selection/result", "cmd/result"] {
                let copies = onTheFleet.messages.filter { $0.topic == "keepalive/\(device)/\(suffix)" }.count
                #expect(copies == 1, "\(suffix) on the fleet \(copies) times: \(onTheFleet.messages)")
            }
        }
    }
}
