import Foundation

/// A persistent broker, gpsd replaying a capture, a persistent-session consumer of the device's
/// locations, and the agent publishing one every `interval` seconds: the rig for broker
/// outages (the default suite's and the fault suite's).
public struct OutageRig {
    public let broker: MosquittoBroker
    public let gps: GPSFake
    public let consumer: MQTTSubscriber
    public let agent: AgentProcess
    public let interval: Int

    public init(interval: Int, locationsFirst: Int) async throws {
        self.interval = interval
        broker = try MosquittoBroker(persistence: true)
        gps = try await GPSFake(capture: Tools.fixture("gpsd/bu353s4.log"), cycle: 0.2)
        consumer = try await MQTTSubscriber(
            port: broker.port, filter: "keepalive/testpi/location", clientID: "consumer-\(UInt16.random(in: 0...9999))",
            persistent: true)
        agent = try AgentProcess(
            brokerPort: broker.port, gpsPort: gps.port, gpsFixTimeout: 30,
            extraConfig: "[schedule]\nlocation_interval_s = \(interval)\nstatus_interval_s = 60\n",
            environment: ["KEEPALIVE_CLOCK_SYNCHRONISED": "1"])
        let (consumer, gps) = (consumer, gps)
        _ = try await agent.explainingFailure(gps: gps) {
            try await consumer.waitFor(count: locationsFirst, timeout: 30, "\(locationsFirst) locations before the outage") { _ in true }
        }
    }

    /// Stops the broker and waits until the agent has noticed.
    public func brokerDown() async throws {
        broker.stop()
        try await agent.process!.waitForLine(containing: "MQTT connection lost", timeout: 10)
    }

    /// Slot location messages as a consumer dedupes them: by seq, first arrival kept, in arrival
    /// order. (The message right after the first fix is off the grid and left out.)
    public static func deduplicated(_ messages: [MQTTSubscriber.Message]) -> [(seq: Int, createdAt: Int)] {
        var seen = Set<Int>()
        var result: [(Int, Int)] = []
        for message in messages {
            guard let json = message.json, json["t"] as? String == "t", let seq = json["seq"] as? Int,
                  let created = json["created_at"] as? Int else { continue }
            if seen.insert(seq).inserted { result.append((seq, created)) }
        }
        return result
    }

    /// Pairs of consecutive slots that are not one interval apart: lost or made-up slots.
    public static func gaps(in slots: [Int], interval: Int) -> [(Int, Int)] {
        zip(slots, slots.dropFirst()).filter { $1 - $0 != interval }
    }
}
