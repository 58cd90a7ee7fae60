import Foundation
import SensorBridge
import StepCounting
import TestKit

/// The accelerometer fixtures under Tests/Fixtures/steps (README.md there says where they come
/// from) read the way the agent will: JSON object → `AccelerationBatch.parse`.
enum AccelerationFixtures {
    struct Batch {
        let sensor: String
        let firstSampleMs: Int64
        let batch: AccelerationBatch
    }

    static func batches(_ name: String) throws -> [Batch] {
        let text = try String(contentsOfFile: Tools.fixture("steps/\(name)"), encoding: .utf8)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return try text.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let sensor = object["sensor"] as? String, let ts = object["ts"] as? String,
                let date = formatter.date(from: ts)
            else { throw FixtureError.unreadable(String(line.prefix(80))) }
            return Batch(
                sensor: sensor, firstSampleMs: Int64((date.timeIntervalSince1970 * 1000).rounded()),
                batch: try AccelerationBatch.parse(object).get())
        }
    }

    /// reference.json: the synthesised walk's true count and the Mobilise-D reference steps.
    static func reference() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Tools.fixture("steps/reference.json")))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FixtureError.unreadable("reference.json")
        }
        return object
    }

    /// Every window of one sensor's batches, through one counter, flushed at the end.
    static func count(_ batches: [Batch], counter: inout AccelerationStepCounter) throws -> [StepWindow] {
        var windows: [StepWindow] = []
        for item in batches { windows += try counter.add(item.batch, firstSampleMs: item.firstSampleMs).get() }
        return windows + counter.flush()
    }

    static func millis(iso: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: iso).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }

    enum FixtureError: Error { case unreadable(String) }
}

