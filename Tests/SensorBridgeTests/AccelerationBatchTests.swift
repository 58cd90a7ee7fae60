import Foundation
import SensorBridge
import Testing

@Suite("pmd_acc bridge message payload")
struct AccelerationBatchTests {
    static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    // The message's other fields (ts, seq, sensor, char) are read by the agent's BridgeMessage, not here.
    @Test("rate and samples in mG are read")
    func valid() throws {
        let batch = try AccelerationBatch.parse(try Self.object(
            #"{"ts":"2026-11-21T08:00:00.000Z","seq":3,"sensor":"h10","char":"pmd_acc","rate_hz":50,"samples":[[-12,980,40],[0,1001,-3]]}"#
        )).get()
        #expect(batch.rateHz == 50)
        #expect(batch.samples == [AccelerationSample(x: -12, y: 980, z: 40), AccelerationSample(x: 0, y: 1001, z: -3)])
        #expect(batch.durationMs == 40)
        #expect(abs(batch.samples[1].magnitude - 1001.0045) < 1e-3)
    }

    @Test(
        "malformed payloads are rejected with the reason",
        arguments: [
            (#"{"samples":[[1,2,3]]}"#, AccelerationBatch.Rejection.missing("rate_hz")),
            (#"{"rate_hz":"50","samples":[[1,2,3]]}"#, .badField("rate_hz")),
            (#"{"rate_hz":true,"samples":[[1,2,3]]}"#, .badField("rate_hz")),
            (#"{"rate_hz":5,"samples":[[1,2,3]]}"#, .badField("rate_hz")),
            (#"{"rate_hz":50}"#, .missing("samples")),
            (#"{"rate_hz":50,"samples":[]}"#, .badField("samples")),
            (#"{"rate_hz":50,"samples":{"x":1}}"#, .badField("samples")),
            (#"{"rate_hz":50,"samples":[[1,2,3],[1,2]]}"#, .badSample(index: 1)),
            (#"{"rate_hz":50,"samples":[[1,2,3.5]]}"#, .badSample(index: 0)),
            (#"{"rate_hz":50,"samples":[[1,2,"3"]]}"#, .badSample(index: 0)),
            (#"{"rate_hz":50,"samples":[[1,true,3]]}"#, .badSample(index: 0)),
            (#"{"rate_hz":50,"samples":[[1,2,16001]]}"#, .badSample(index: 0)),
            (#"{"rate_hz":50,"samples":[[1,2,3,4]]}"#, .badSample(index: 0)),
        ])
    func rejections(json: String, reason: AccelerationBatch.Rejection) throws {
        #expect(AccelerationBatch.parse(try Self.object(json)) == .failure(reason))
    }

    @Test("more than 1000 samples in one message is refused")
    func tooMany() throws {
        let samples = Array(repeating: "[0,0,1000]", count: 1001).joined(separator: ",")
        #expect(AccelerationBatch.parse(try Self.object(#"{"rate_hz":50,"samples":[\#(samples)]}"#)) == .failure(.badField("samples")))
    }
}
