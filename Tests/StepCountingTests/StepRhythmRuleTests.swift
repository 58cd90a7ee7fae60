import Foundation
import SensorBridge
import StepCounting
import Testing

/// The two rules for weak steps at either side of a walk's rhythm (docs/steps.md, step 6–7), on
/// synthesised signals: plumbing checks that each rule does what it says, not evidence of
/// accuracy (that is the real recordings' tests and scripts/steps-accuracy.py).
@Suite("Weak steps that keep a walk's rhythm")
struct StepRhythmRuleTests {
    static let t0: Int64 = 1_795_248_000_000  // 2026-11-21T00:00:00Z
    static let rateHz = 50.0
    static let interval = 0.55  // s between steps: 109 steps/min

    /// 1 g on one axis plus a cos² bump one step interval wide per step (time s, height mG).
    static func signal(_ steps: [(time: Double, height: Double)], seconds: Double) -> [AccelerationSample] {
        (0..<Int(seconds * rateHz)).map { index in
            let t = Double(index) / rateHz
            var value = 1000.0
            for step in steps where abs(t - step.time) < interval / 2 {
                let c = cos(Double.pi * (t - step.time) / interval)
                value += step.height * c * c
            }
            return AccelerationSample(x: Int(value.rounded()), y: 0, z: 0)
        }
    }

    static func count(_ samples: [AccelerationSample], parameters: StepDetectionParameters = .init()) throws -> Int {
        var counter = AccelerationStepCounter(windowMs: 60_000, parameters: parameters)
        let windows = try counter.add(AccelerationBatch(rateHz: rateHz, samples: samples), firstSampleMs: t0).get()
        return (windows + counter.flush()).reduce(0) { $0 + $1.steps }
    }

    /// Twelve clear steps (300 mG), then `after`.
    static func walkThen(_ after: [(time: Double, height: Double)]) -> [AccelerationSample] {
        signal((0..<12).map { (2 + Double($0) * interval, 300) } + after, seconds: 14)
    }

    static let lastStep = 2 + 11 * interval

    @Test("a weak step one interval after a walk's last is its closing step and counts")
    func closingStepCounts() throws {
        #expect(try Self.count(Self.walkThen([])) == 12)
        #expect(try Self.count(Self.walkThen([(Self.lastStep + Self.interval, 45)])) == 13)
    }

    @Test("without the closing-step rule the same weak step is not counted")
    func closingStepNeedsTheRule() throws {
        var parameters = StepDetectionParameters()
        parameters.closingStepMinAmplitudeMilliG = .infinity
        #expect(try Self.count(Self.walkThen([(Self.lastStep + Self.interval, 45)]), parameters: parameters) == 12)
    }

    @Test("a weak peak out of the walk's rhythm after it stops is no closing step")
    func lateWeakPeakIgnored() throws {
        #expect(try Self.count(Self.walkThen([(Self.lastStep + 1.9 * Self.interval, 45)])) == 12)
    }

    /// Twenty steps of 600 mG, the eleventh only 130 mG: under a quarter of the recent average
    /// rise, over the floor.
    static let walkWithWeakStep = signal((0..<20).map { (2 + Double($0) * interval, $0 == 10 ? 130 : 600) }, seconds: 18)

    @Test("a weak step where the rhythm expects one counts")
    func rhythmicWeakStepCounts() throws {
        #expect(try Self.count(Self.walkWithWeakStep) == 20)
    }

    @Test("without the rhythmic threshold the same weak step is missed")
    func rhythmicWeakStepNeedsTheRule() throws {
        var parameters = StepDetectionParameters()
        parameters.rhythmicRelativeAmplitude = parameters.relativeAmplitude
        #expect(try Self.count(Self.walkWithWeakStep, parameters: parameters) == 19)
    }
}
