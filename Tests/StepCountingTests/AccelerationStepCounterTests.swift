import Foundation
import SensorBridge
import StepCounting
import Testing

@Suite("Steps from a chest strap's accelerometer")
struct AccelerationStepCounterTests {
    static let t0: Int64 = 1_795_248_000_000  // 2026-11-21T00:00:00Z

    /// Flat, still signal: gravity on one axis and a little noise-free wobble.
    static func still(_ count: Int) -> [AccelerationSample] {
        (0..<count).map { AccelerationSample(x: 1000 + ($0 % 3), y: 20, z: -15) }
    }

    @Test("the synthesised walk and run: the count within 2 % of the truth, nothing while still or fidgeting")
    func synthesised() throws {
        let batches = try AccelerationFixtures.batches("synthetic-walk-acc.ndjson")
        let references = try AccelerationFixtures.reference()
        let truth = try #require(references["synthetic"] as? [String: Any])
        let trueSteps = try #require(truth["steps"] as? Int)
        var counter = AccelerationStepCounter(windowMs: 5000)
        let windows = try AccelerationFixtures.count(batches, counter: &counter)
        let counted = windows.reduce(0) { $0 + $1.steps }
        print("Synthesised chest walk and run: \(counted) steps counted, \(trueSteps) true")
        #expect(abs(counted - trueSteps) <= trueSteps * 2 / 100, "counted \(counted) of \(trueSteps)")
        #expect(counter.stretches == 1 && counter.samples == batches.reduce(0) { $0 + $1.batch.samples.count })

        // Windows wholly inside a still or fidgeting segment, a second clear of any gait, hold no step.
        let firstSample = try #require(truth["first_sample"] as? String)
        let start = try #require(AccelerationFixtures.millis(iso: firstSample))
        var segmentStart = start
        for segment in try #require(truth["segments"] as? [[String: Any]]) {
            let seconds = try #require(segment["seconds"] as? Int)
            let end = segmentStart + Int64(seconds) * 1000
            if segment["steps"] as? Int == 0 {
                let inside = windows.filter { $0.startMs >= segmentStart + 1000 && $0.startMs + 5000 <= end }
                #expect(!inside.isEmpty)
                #expect(inside.allSatisfy { $0.steps == 0 }, "\(segment["kind"] ?? "") at \(segmentStart - start) ms")
            }
            segmentStart = end
        }
    }

    @Test("real lower-back walking (Mobilise-D): within 4 % of the reference steps inside its walking bouts")
    func mobilised() throws {
        let batches = try AccelerationFixtures.batches("mobilised-lab-acc.ndjson")
        let references = try AccelerationFixtures.reference()
        let recordings = try #require(references["mobilised"] as? [[String: Any]])
        var reference = 0, counted = 0, absolute = 0
        for recording in recordings {
            let sensor = try #require(recording["sensor"] as? String)
            let firstSample = try #require(recording["first_sample"] as? String)
            let start = try #require(AccelerationFixtures.millis(iso: firstSample))
            var counter = AccelerationStepCounter(windowMs: 100)  // step times to a tenth of a second
            let windows = try AccelerationFixtures.count(batches.filter { $0.sensor == sensor }, counter: &counter)
            var inBouts = 0, expected = 0
            for bout in try #require(recording["indip_bouts"] as? [[String: Any]]) {
                let boutStart = try #require(bout["start_s"] as? Double), boutEnd = try #require(bout["end_s"] as? Double)
                let from = start + Int64(boutStart * 1000) - 300
                let to = start + Int64(boutEnd * 1000) + 300
                inBouts += windows.filter { $0.startMs >= from && $0.startMs <= to }.reduce(0) { $0 + $1.steps }
                expected += try #require(bout["initial_contacts"] as? Int)
            }
            reference += expected
            counted += inBouts
            absolute += abs(inBouts - expected)
        }
        print("Mobilise-D lower back, 7 recordings: \(counted) steps counted in the reference bouts, \(reference) in the reference, |error| \(absolute)")
        #expect(reference == 236)
        #expect(absolute * 100 <= reference * 4, "|error| summed over recordings: \(absolute) of \(reference)")
        #expect(abs(counted - reference) * 100 <= reference * 2, "net: \(counted) counted, \(reference) in the reference")
    }

    @Test("a phone hung on the chest (Oxford Step Counter, neck pouch, 2 people): each walk within 3 % of the ground-truth count")
    func oxfordNeckPouch() throws {
        let batches = try AccelerationFixtures.batches("oxford-neckpouch-acc.ndjson")
        let recordings = try #require(try AccelerationFixtures.reference()["oxford"] as? [[String: Any]])
        #expect(recordings.count == 2)
        for recording in recordings {
            let sensor = try #require(recording["sensor"] as? String)
            let truth = try #require(recording["steps"] as? Int)
            var counter = AccelerationStepCounter(windowMs: 60_000)
            let counted = try AccelerationFixtures.count(batches.filter { $0.sensor == sensor }, counter: &counter).reduce(0) { $0 + $1.steps }
            print("Oxford \(sensor): \(counted) steps counted, \(truth) by the ground-truth device")
            #expect(abs(counted - truth) * 100 <= truth * 3, "\(sensor): counted \(counted) of \(truth)")
        }
    }

    @Test("batch boundaries change nothing: the same signal cut 1, 7, 36 or 333 samples at a time", arguments: [1, 7, 36, 333])
    func seams(size: Int) throws {
        let whole = try AccelerationFixtures.batches("synthetic-walk-acc.ndjson")
        let samples = whole.flatMap(\.batch.samples)
        var reference = AccelerationStepCounter(windowMs: 10_000)
        let expected = try AccelerationFixtures.count(whole, counter: &reference)
        var counter = AccelerationStepCounter(windowMs: 10_000)
        var windows: [StepWindow] = []
        for first in stride(from: 0, to: samples.count, by: size) {
            let batch = AccelerationBatch(rateHz: 50, samples: Array(samples[first..<min(first + size, samples.count)]))
            windows += try counter.add(batch, firstSampleMs: whole[0].firstSampleMs + Int64(first) * 20).get()
        }
        windows += counter.flush()
        #expect(windows == expected)
        #expect(counter.steps == reference.steps && counter.stretches == 1)
    }

    @Test("windows close while the walk goes on, a few seconds after they end")
    func liveWindows() throws {
        let batches = try AccelerationFixtures.batches("synthetic-walk-acc.ndjson")
        var counter = AccelerationStepCounter(windowMs: 15_000)
        var worstLagMs: Int64 = 0
        for item in batches {
            let end = item.firstSampleMs + Int64(item.batch.durationMs)
            for window in try counter.add(item.batch, firstSampleMs: item.firstSampleMs).get() {
                worstLagMs = max(worstLagMs, end - (window.startMs + 15_000))
            }
        }
        // A run's first steps wait until it is long enough (4 steps, ≤ 2 s apart), plus the peak
        // window; then the stride check (rule 9) holds a block's steps until the 10-s block is over.
        #expect(worstLagMs <= 19_000, "a window closed \(worstLagMs) ms after its end")
    }

    @Test("an overlapping batch is refused and changes nothing")
    func overlapRefused() throws {
        var counter = AccelerationStepCounter(windowMs: 1000)
        let batch = AccelerationBatch(rateHz: 50, samples: Self.still(50))
        _ = try counter.add(batch, firstSampleMs: Self.t0).get()
        #expect(counter.add(batch, firstSampleMs: Self.t0) == .failure(.overlaps(ms: 1000)))
        #expect(counter.samples == 50)
        #expect(counter.stretches == 1)
    }

    @Test("a late batch starts a new stretch")
    func continuity() throws {
        var counter = AccelerationStepCounter(windowMs: 1000)
        let batch = AccelerationBatch(rateHz: 50, samples: Self.still(50))
        var closed = try counter.add(batch, firstSampleMs: Self.t0).get()
        // 100 ms late: within the tolerance, the same stretch.
        closed += try counter.add(batch, firstSampleMs: Self.t0 + 1100).get()
        #expect(counter.stretches == 1)
        // 5 s late: the stretch ends and all its windows come out; a new one starts.
        closed += try counter.add(batch, firstSampleMs: Self.t0 + 7000).get()
        #expect(counter.stretches == 2)
        #expect(closed.map(\.startMs) == [Self.t0, Self.t0 + 1000, Self.t0 + 2000])
        #expect(closed.map(\.coveredMs) == [1000, 900, 100])
        #expect(closed.allSatisfy { $0.steps == 0 }, "worn and still: a real zero")
        // Another rate: another stretch.
        closed = try counter.add(AccelerationBatch(rateHz: 100, samples: Self.still(10)), firstSampleMs: Self.t0 + 8000).get()
        #expect(counter.stretches == 3)
        #expect(closed.map(\.startMs) == [Self.t0 + 7000])
        #expect(counter.flush().map(\.startMs) == [Self.t0 + 8000])
        #expect(counter.flush().isEmpty)
    }

    @Test("a window cut by a gap gives two records, told apart by their first sample")
    func splitWindow() throws {
        var counter = AccelerationStepCounter(windowMs: 60_000)
        let batch = AccelerationBatch(rateHz: 25, samples: Self.still(25))
        _ = try counter.add(batch, firstSampleMs: Self.t0 + 1000).get()
        let first = try counter.add(batch, firstSampleMs: Self.t0 + 30_000).get()
        let second = counter.flush()
        #expect(first.count == 1 && second.count == 1)
        #expect(first[0].startMs == second[0].startMs)
        #expect(first[0].firstSampleMs == Self.t0 + 1000 && second[0].firstSampleMs == Self.t0 + 30_000)
        #expect(first[0].lastSampleMs == Self.t0 + 1960 && first[0].coveredMs == 1000)
        #expect(first[0].estimated)
    }

    @Test("empty batches and impossible rates are refused")
    func refusals() {
        var counter = AccelerationStepCounter()
        #expect(counter.add(AccelerationBatch(rateHz: 50, samples: []), firstSampleMs: Self.t0) == .failure(.empty))
        #expect(counter.add(AccelerationBatch(rateHz: 0, samples: Self.still(1)), firstSampleMs: Self.t0) == .failure(.badRate(0)))
    }
}
