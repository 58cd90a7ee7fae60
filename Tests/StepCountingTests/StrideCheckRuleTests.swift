import Foundation
import SensorBridge
import StepCounting
import Testing

/// Rule 9, the stride check (docs/steps.md), on a synthesised hemiparetic-like walk: plumbing
/// checks that the rule does what it says, not evidence of accuracy (the real walks are in
/// TreadmillStrokeStepTests and scripts/steps-accuracy.py).
@Suite("Steps counted by the stride where the peaks do not fit it")
struct StrideCheckRuleTests {
    static let t0: Int64 = 1_795_248_000_000  // 2026-11-21T00:00:00Z
    static let rateHz = 50.0
    static let stride = 1.0  // s
    static let strides = 40
    /// Standing before the walk: under the rule's 1.5 s edge, so its first 10-s block is judged too.
    static let lead = 1.0

    /// A cos² bump 0.4 s wide per step on a vertical 1 g (x), and the mediolateral sway of the
    /// trunk, once per stride, on y. The strong side's step starts each stride; the weak side's
    /// comes 0.45 s later, its height repeating every three strides (`weakHeights`), so the
    /// signal's only period under 2.5 s is the stride.
    static func walk(weakHeights: [Double]) -> [AccelerationSample] {
        var steps: [(time: Double, height: Double)] = []
        for index in 0..<strides {
            let start = lead + Double(index) * stride
            steps.append((start, 400))
            steps.append((start + 0.45, weakHeights[index % weakHeights.count]))
        }
        let seconds = lead + Double(strides) * stride + 2
        return (0..<Int(seconds * rateHz)).map { index in
            let t = Double(index) / rateHz
            var vertical = 1000.0
            for step in steps where abs(t - step.time) < 0.2 {
                let c = cos(Double.pi * (t - step.time) / 0.4)
                vertical += step.height * c * c
            }
            let walking = t >= lead && t < lead + Double(strides) * stride
            let sway = walking ? 120 * sin(2 * Double.pi * (t - lead) / stride) : 0
            return AccelerationSample(x: Int(vertical.rounded()), y: Int(sway.rounded()), z: 0)
        }
    }

    static func count(_ samples: [AccelerationSample], parameters: StepDetectionParameters = .init()) throws
        -> (steps: Int, correctedBlocks: Int)
    {
        var counter = AccelerationStepCounter(windowMs: 60_000, parameters: parameters)
        let windows = try counter.add(AccelerationBatch(rateHz: rateHz, samples: samples), firstSampleMs: t0).get()
        let steps = (windows + counter.flush()).reduce(0) { $0 + $1.steps }
        return (steps, counter.strideCorrectedBlocks)
    }

    /// Two of every three weak steps rise 40 mG, under the 60 mG floor: the peaks find 1⅓ a stride.
    static let weakSideMostlyMissed = walk(weakHeights: [200, 40, 40])

    @Test("a weak side found one stride in three is counted as two steps a stride")
    func weakSideCountedByStride() throws {
        let (steps, corrected) = try Self.count(Self.weakSideMostlyMissed)
        let truth = 2 * Self.strides
        #expect(corrected > 0, "no block was judged")
        #expect(abs(steps - truth) * 100 <= truth * 5, "counted \(steps) of \(truth)")
    }

    @Test("without the stride check the same walk loses the missed weak steps")
    func weakSideMissedWithoutTheRule() throws {
        var parameters = StepDetectionParameters()
        parameters.strideCheckMinCorrelation = 2  // no autocorrelation reaches it: the check never judges
        let (steps, corrected) = try Self.count(Self.weakSideMostlyMissed, parameters: parameters)
        #expect(corrected == 0)
        #expect(steps * 100 <= 2 * Self.strides * 75, "counted \(steps) of \(2 * Self.strides)")
    }

    @Test("a walk whose weak side is always found keeps its peaks")
    func fittingPeaksKept() throws {
        let (steps, corrected) = try Self.count(Self.walk(weakHeights: [200]))
        #expect(corrected == 0, "\(corrected) blocks replaced")
        #expect(abs(steps - 2 * Self.strides) <= 1, "counted \(steps) of \(2 * Self.strides)")
    }
}
