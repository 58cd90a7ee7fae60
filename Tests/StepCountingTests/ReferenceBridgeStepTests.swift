import Foundation
import SensorBridge
import StepCounting
import TestKit
import Testing

/// What the reference bridge (deploy/hr-bridge) emits for the step sources is what these parsers
/// read. Its own tests, and the one against a fake BlueZ, run in AgentTests' "Reference
/// heart-rate bridge" suite (they cover the RSC and PMD paths too).
@Suite("Reference bridge: step messages")
struct ReferenceBridgeStepTests {
    static let script = "\(Tools.packageRoot)/deploy/hr-bridge/keepalive_hr_bridge.py"

    static func bridge(_ arguments: [String]) async throws -> [[String: Any]] {
        let process = try ManagedProcess(name: "bridge", executable: Tools.find("python3"), arguments: [script] + arguments)
        let status = await process.waitForExit(timeout: 20)
        #expect(status == 0, "\(process.text)")
        return try process.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("a 0x2A53 value goes out as char 2a53 and decodes to the same measurement",
          arguments: ["000003aa", "050003aa6a00", "070003aa6a0039300000", "fc0003aa"])
    func rsc(hex: String) async throws {
        let messages = try await Self.bridge(["--encode-hex", hex, "--char", "2a53", "--sensor", "pod"])
        let message = try #require(messages.first)
        #expect(message["char"] as? String == "2a53" && message["sensor"] as? String == "pod")
        let raw = try #require(message["raw"] as? String)
        let measurement = try RSCMeasurement.parse(hex: raw).get()
        #expect(measurement == (try RSCMeasurement.parse(hex: hex).get()))
        #expect(message["cadence"] as? Int == measurement.cadence)
    }

    @Test("a PMD ACC frame (16-bit and compressed) goes out as pmd_acc batches the agent reads")
    func accelerometer() async throws {
        // Type 1 (int16) frame, timestamp 10^9 ns, 150 samples of (i, -i, 1000): split 100 + 50.
        var frame: [UInt8] = [0x02] + withUnsafeBytes(of: UInt64(1_000_000_000).littleEndian, Array.init) + [0x01]
        for i in 0..<150 {
            for value in [Int16(i), Int16(-i), 1000] { frame += withUnsafeBytes(of: value.littleEndian, Array.init) }
        }
        let hex = frame.map { String(format: "%02x", $0) }.joined()
        let messages = try await Self.bridge(["--decode-pmd", hex, "--acc-rate", "50", "--sensor", "h10"])
        #expect(messages.count == 2)
        let batches = try messages.map { try AccelerationBatch.parse($0).get() }
        #expect(batches.map(\.samples.count) == [100, 50])
        #expect(batches[1].samples[0] == AccelerationSample(x: 100, y: -100, z: 1000))
        #expect(messages.allSatisfy { $0["char"] as? String == "pmd_acc" && $0["rate_hz"] as? Int == 50 })

        // A compressed frame: reference (10, 20, 30), then one 2-bit delta (+1, -1, 0).
        let compressed = "02" + "00ca9a3b00000000" + "81" + "0a0014001e00" + "02010d"
        let decoded = try await Self.bridge(["--decode-pmd", compressed, "--acc-rate", "25"])
        let batch = try AccelerationBatch.parse(try #require(decoded.first)).get()
        #expect(batch.rateHz == 25)
        #expect(batch.samples == [AccelerationSample(x: 10, y: 20, z: 30), AccelerationSample(x: 11, y: 19, z: 30)])
    }
}
