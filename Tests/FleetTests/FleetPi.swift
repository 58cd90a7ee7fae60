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

    /// The issued bridge file (it holds the device's token).
    let bridgeFile: String

    init(device: String, cluster: FleetCluster, directory: TemporaryDirectory) async throws {
        self.device = device
        let issued = directory.file("\(device)-bridge.conf")
        bridgeFile = issued
        // Over TLS the bridge names the nodes as their certificate does, and verifies it.
        let host = cluster.clientHost
        var environment = ["FLEET_CTL": "\(Tools.packageRoot)/deploy/fleet/cluster.sh ctl \(cluster.directory) 1"]
        if let tls = cluster.tlsDirectory { environment["FLEET_CAFILE"] = "\(tls)/ca.pem" }
        environment["FLEET_JWT_DIR"] = cluster.jwtDirectory
        let add = try await runCommand(
            "\(Tools.packageRoot)/deploy/fleet/device-credentials.sh",
            ["add", device, "\(host):\(cluster.port(1))", "\(host):\(cluster.port(2))", issued], environment: environment)
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
