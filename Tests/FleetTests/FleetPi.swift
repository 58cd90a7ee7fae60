import Foundation
import Testing
import TestKit

/// A "Pi" of the fleet: its own mosquitto, configured with the bridge file
/// deploy/fleet/device-credentials.sh issues for `device` (a test listener, no persistence
/// file), bridged to nodes 1 and 2 of `cluster`. Stopped by the caller.
struct FleetPi {
    let device: String
    let localPort: Int
    let broker: ManagedProcess

    init(device: String, cluster: FleetCluster, directory: TemporaryDirectory) async throws {
        self.device = device
        let issued = directory.file("\(device)-bridge.conf")
        let add = try await runCommand(
            "\(Tools.packageRoot)/deploy/fleet/device-credentials.sh",
            ["add", device, "127.0.0.1:\(cluster.port(1))", "127.0.0.1:\(cluster.port(2))", issued],
            environment: ["FLEET_CTL": "\(Tools.packageRoot)/deploy/fleet/cluster.sh ctl \(cluster.directory) 1"])
        try #require(add.status == 0, "\(add.output)")
        let localPort = Ports.free()
        let conf = try String(contentsOfFile: issued, encoding: .utf8)
            .replacingOccurrences(of: "listener 1883 127.0.0.1", with: "listener \(localPort) 127.0.0.1\nuser root")
            .replacingOccurrences(of: "persistence true", with: "persistence false")
            .replacingOccurrences(of: "persistence_location /var/lib/mosquitto/", with: "")
        let localConf = try directory.write("\(device)-mosquitto.conf", conf)
        broker = try ManagedProcess(name: "\(device) mosquitto", executable: Tools.mosquitto, arguments: ["-c", localConf])
        self.localPort = localPort
        try await Wait.until(timeout: 10, "the Pi's mosquitto to listen") { Ports.isListening(localPort) }
    }

    func stop() { broker.stop() }
}
