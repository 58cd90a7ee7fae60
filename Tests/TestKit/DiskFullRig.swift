import Foundation

/// The agent storing fixes from gpsfake on a 4 MiB tmpfs, with a status subscriber and status
/// every second: the rig for filling the store's disk (the default suite's and the fault suite's).
public struct DiskFullRig {
    public let disk: SmallDisk
    public let broker: MosquittoBroker
    public let status: MQTTSubscriber
    public let gps: GPSFake
    public let agent: AgentProcess

    public init() async throws {
        disk = try await SmallDisk(megabytes: 4)
        broker = try MosquittoBroker()
        status = try await MQTTSubscriber(port: broker.port, filter: "keepalive/testpi/status")
        gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.05)
        agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
            extraConfig: "[schedule]\nstatus_interval_s = 1\n", store: disk.path + "/k.db",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
    }

    /// The `store.error` a status message carries, if any.
    public static func storeError(_ message: MQTTSubscriber.Message) -> String? {
        (message.json?["store"] as? [String: Any])?["error"] as? String
    }
}
