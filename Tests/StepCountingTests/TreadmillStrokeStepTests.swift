import Foundation
import StepCounting
import Testing

/// Two real treadmill walks of people after a stroke, lower-back sensor (Movin(g)Reality study,
/// MIT; Tests/Fixtures/steps/README.md): the first trial listed for each of the first two
/// participants. The reference is the shank gyroscopes' mid-swing peaks (docs/steps.md), not a
/// hand count.
@Suite("Steps of people after a stroke on a treadmill (lower back)")
struct TreadmillStrokeStepTests {
    static func counted(trial: String, parameters: StepDetectionParameters = .init()) throws -> (counted: Int, reference: Int) {
        let batches = try AccelerationFixtures.batches("movingreality-treadmill-acc.ndjson")
        let recordings = try #require(try AccelerationFixtures.reference()["movingreality"] as? [[String: Any]])
        let recording = try #require(recordings.first { $0["trial"] as? String == trial })
        let sensor = try #require(recording["sensor"] as? String)
        let reference = try #require(recording["shank_swing_steps"] as? Int)
        var counter = AccelerationStepCounter(windowMs: 60_000, parameters: parameters)
        let windows = try AccelerationFixtures.count(batches.filter { $0.sensor == sensor }, counter: &counter)
        let counted = windows.reduce(0) { $0 + $1.steps }
        print("Movin(g)Reality \(trial): \(counted) steps counted, \(reference) shank swings")
        return (counted, reference)
    }

    @Test("a two-minute treadmill walk (participant 2): within 3 % of the shank swings")
    func walkWithinThreePercent() throws {
        let (counted, reference) = try Self.counted(trial: "pp02-Reg")
        #expect(abs(counted - reference) * 100 <= reference * 3, "counted \(counted) of \(reference)")
    }

    /// This slow walker's trunk makes three acceleration peaks a stride (a stride of ~1.8 s counted
    /// as 860 + 500 + 480 ms), every one far enough above the threshold to be a step: the peaks
    /// alone count 255 (+29 %). The stride check (rule 9, docs/steps.md) sees about three peaks per
    /// period of the trunk's autocorrelation and counts two steps a stride instead.
    @Test("a slow walker whose trunk peaks three times a stride (participant 1): within 3 % by the stride check")
    func threePeaksAStrideCountedByStride() throws {
        let (counted, reference) = try Self.counted(trial: "pp01-1Reg")
        #expect(abs(counted - reference) * 100 <= reference * 3, "counted \(counted) of \(reference)")
    }

    @Test("without the stride check, the same walk is over-counted by 20–40 %")
    func threePeaksAStrideWithoutStrideCheck() throws {
        var parameters = StepDetectionParameters()
        parameters.strideCheckMinCorrelation = 2  // no autocorrelation reaches it: the check never judges
        let (counted, reference) = try Self.counted(trial: "pp01-1Reg", parameters: parameters)
        #expect(counted * 100 >= reference * 120 && counted * 100 <= reference * 140, "counted \(counted) of \(reference)")
    }
}
