import Foundation
import Testing
import TestKit

@testable import SleepStaging

/// The port against the real sleepecg 0.6.0 (Python, in a cached venv) on the same real RR series:
/// the 36 features equal to float tolerance epoch by epoch, and the wake/sleep labels agreeing.
@Suite("sleepecg port agreement", .serialized)
struct ReferenceAgreementTests {
    /// Float tolerance for the features: the port sums and transforms in a different order than
    /// numpy/pocketfft in places (the FFT, some products), so the last bits may differ.
    static let relativeTolerance = 1e-9
    /// Keras computes in float32; the port in double from the same float32 weights and inputs.
    static let probabilityTolerance = 1e-5

    /// 2026-11-20T00:00:00Z.
    static let midnightUTC = 1_795_132_800.0

    @Test("features and labels equal sleepecg's on an hour and a 9-hour night of real RR intervals")
    func portMatchesSleepecg() async throws {
        let fixture = NSRFixture.shared
        let hour = NSRFixture.heartbeatTimes(intervalsMs: fixture.intervalsMs)
        let night = AssembledNight.beatTimesMs(hourIntervalsMs: fixture.intervalsMs).map { Double($0) / 1000 }
        // Each case: the same heartbeat times both sides, a start as local clock time and UTC offset.
        let cases: [(SleepecgReference.Case, startUnix: Double, offset: Int, subject: SubjectData)] = [
            (.init(name: "hour", heartbeatTimes: hour, start: "23:10:05", age: 45, gender: 1),
             Self.midnightUTC + 22 * 3600 + 10 * 60 + 5.75, 3600, SubjectData(age: 45, gender: .male)),
            (.init(name: "hour-unknown-subject", heartbeatTimes: hour, start: "23:10:05"),
             Self.midnightUTC + 22 * 3600 + 10 * 60 + 5, 3600, SubjectData()),
            (.init(name: "night", heartbeatTimes: night, start: "22:47:13", age: 61, gender: 0),
             Self.midnightUTC + 21 * 3600 + 47 * 60 + 13.25, 3600, SubjectData(age: 61, gender: .female)),
        ]
        let directory = try TemporaryDirectory("sleepecg-agreement")
        let reference = try await SleepecgReference.run(cases.map(\.0), in: directory)

        for (item, startUnix, offset, subject) in cases {
            let recording = SleepRecording(
                startUnix: startUnix, utcOffsetSeconds: offset, rr: try RRSeries(heartbeatTimes: item.heartbeatTimes),
                subject: subject)
            let features = SleepFeatures(recording)
            let epochs = WakeSleepClassifier.classify(recording)
            let result = try #require(reference[item.name])
            let agreement = Agreement(port: features, portEpochs: epochs, reference: result)
            print("sleepecg agreement [\(item.name)]: \(agreement.summary())")

            #expect(features.epochCount == result.epochs, "[\(item.name)] epoch count")
            #expect(agreement.finiteMismatches.isEmpty, "[\(item.name)] NaN/inf where sleepecg has a number or the reverse: \(agreement.finiteMismatches.prefix(5))")
            #expect(agreement.worstRelative <= Self.relativeTolerance, "[\(item.name)] \(agreement.summary())")
            #expect(agreement.maxProbabilityDifference <= Self.probabilityTolerance, "[\(item.name)] \(agreement.summary())")
            #expect(agreement.labelAgreement >= 0.99, "[\(item.name)] \(agreement.summary())")
            if item.name == "night" {
                // The damage reached every path: epochs with no beat in their window, with too many
                // missing samples for a spectrum, and with a spectrum from a partly missing window.
                let meanNN = 0
                let totalPower = SleepFeatures.names.firstIndex(of: "total_power") ?? 0
                let rows = 0..<features.epochCount
                #expect(rows.contains { features[$0, meanNN].isNaN })
                #expect(rows.contains { !features[$0, meanNN].isNaN && features[$0, totalPower].isNaN })
                let windows = SleepFeatures.windows(
                    times: recording.rr.endTimes, epochs: features.epochCount, lookback: 240, lookforward: 270)
                let partial = rows.filter { epoch in
                    !features[epoch, totalPower].isNaN
                        && windows[epoch].contains { recording.rr.intervals[$0] > 2 || recording.rr.intervals[$0] < 0.3 }
                }
                #expect(partial.count > 10)
            }
        }
    }
}

extension ReferenceAgreementTests {
    @Test("the committed weights file is what scripts/sleepecg/make_weights.py makes from the wheel")
    func committedWeightsAreRegenerated() async throws {
        let python = try await SleepecgReference.python()
        let directory = try TemporaryDirectory("sleepecg-weights")
        let process = try ManagedProcess(
            name: "make_weights", executable: python,
            arguments: ["\(Tools.packageRoot)/scripts/sleepecg/make_weights.py", directory.path],
            environment: ["KERAS_BACKEND": "numpy"])
        #expect(await process.waitForExit(timeout: 300) == 0, "\(process.text.suffix(2000))")
        for file in ["WsGruMesaArchive.swift", "LICENSE.sleepecg"] {
            let made = try Data(contentsOf: URL(fileURLWithPath: directory.file(file)))
            let committed = try Data(contentsOf: URL(fileURLWithPath: "\(Tools.packageRoot)/Sources/SleepStaging/Model/\(file)"))
            #expect(made == committed, "\(file) differs from what the wheel gives: run make_weights.py")
        }
    }

    @Test("a strap's notifications of the real hour, rebuilt into beats, are labelled as sleepecg labels those beats")
    func strapNotificationsAgree() async throws {
        let fixture = NSRFixture.shared
        var builder = RRSeriesBuilder()
        builder.add(contentsOf: fixture.notifications)
        // 08:00 UTC at −9 h: a recording that starts at about 23:00 local.
        let recording = try builder.recording(utcOffsetSeconds: -9 * 3600)
        let clock = recording.startClockSeconds
        let start = String(format: "%02d:%02d:%02d", clock / 3600, clock / 60 % 60, clock % 60)
        let rebuilt = [0] + recording.rr.endTimes
        let truth = NSRFixture.heartbeatTimes(intervalsMs: fixture.intervalsMs)
        let directory = try TemporaryDirectory("sleepecg-strap")
        let reference = try await SleepecgReference.run(
            [.init(name: "strap", heartbeatTimes: rebuilt, start: start),
             .init(name: "strap-truth-ms", heartbeatTimes: truth, start: start)], in: directory)
        let features = SleepFeatures(recording)
        let epochs = WakeSleepClassifier.classify(recording)
        let agreement = Agreement(port: features, portEpochs: epochs, reference: try #require(reference["strap"]))
        print("sleepecg agreement [strap notifications → beats]: \(agreement.summary())")
        #expect(agreement.finiteMismatches.isEmpty, "\(agreement.finiteMismatches.prefix(5))")
        // sleepecg gets beat times, the port the strap's intervals themselves: their differences
        // agree to ~1e-13 s.
        #expect(agreement.worstRelative <= Self.relativeTolerance, "\(agreement.summary())")
        #expect(agreement.labelAgreement >= 0.99, "\(agreement.summary())")

        // Not the port's error: what the strap's 1/1024-s resolution (the fixture's intervals were
        // whole ms) does to sleepecg's own labels on this hour.
        let quantization = Agreement(port: features, portEpochs: epochs, reference: try #require(reference["strap-truth-ms"]))
        print("sleepecg on the same hour in whole ms instead of 1/1024 s: \(quantization.summary())")
    }
}
