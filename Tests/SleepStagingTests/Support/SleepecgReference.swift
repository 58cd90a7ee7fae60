import Foundation
import SleepStaging
import TestKit

/// The real sleepecg 0.6.0, run by scripts/sleepecg/reference.py in the venv that
/// scripts/sleepecg/venv.sh makes and caches (~/.cache/keepalive/).
enum SleepecgReference {
    struct Case {
        var name: String
        var heartbeatTimes: [Double]
        /// Local clock time of the recording start, "HH:MM:SS".
        var start: String
        var age: Int?
        var gender: Int?
    }

    struct Result {
        var epochs: Int
        /// epochs × 36, row-major.
        var features: [Double]
        /// epochs × 3: UNDEFINED, SLEEP, WAKE.
        var probabilities: [Float]
        /// Seconds in sleepecg's `stage()` (features + Keras model), and in `extract_features` alone.
        var stageSeconds: Double
        var featureSeconds: Double
    }

    /// The venv's python, made on first use (a minute or two from PyPI).
    static func python() async throws -> String {
        let script = "\(Tools.packageRoot)/scripts/sleepecg/venv.sh"
        let process = try ManagedProcess(name: "sleepecg venv", executable: "/bin/bash", arguments: [script])
        guard await process.waitForExit(timeout: 1200) == 0,
              let python = process.lines.last(where: { $0.hasSuffix("/bin/python") }) else {
            throw SleepStagingError.invalidInput("scripts/sleepecg/venv.sh failed:\n\(process.text.suffix(3000))")
        }
        return python
    }

    /// Runs sleepecg on every case (one Python process) and reads back what it computed.
    static func run(_ cases: [Case], in directory: TemporaryDirectory, repeat runs: Int = 1) async throws -> [String: Result] {
        var directories: [String] = []
        for item in cases {
            let path = directory.file(item.name)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try write(item.heartbeatTimes, to: "\(path)/heartbeats.f64")
            let record: [String: Any] = [
                "start": item.start, "age": item.age.map { $0 as Any } ?? NSNull(), "gender": item.gender.map { $0 as Any } ?? NSNull(),
            ]
            try JSONSerialization.data(withJSONObject: record).write(to: URL(fileURLWithPath: "\(path)/record.json"))
            directories.append(path)
        }
        let python = try await python()
        let process = try ManagedProcess(
            name: "sleepecg reference", executable: python,
            arguments: ["\(Tools.packageRoot)/scripts/sleepecg/reference.py", "--repeat=\(runs)"] + directories,
            environment: ["KERAS_BACKEND": "numpy"])
        guard await process.waitForExit(timeout: 900) == 0 else {
            throw SleepStagingError.invalidInput("reference.py failed:\n\(process.text.suffix(3000))")
        }
        var results: [String: Result] = [:]
        for (item, path) in zip(cases, directories) {
            let features: [Double] = try read("\(path)/features.f64")
            let probabilities: [Float] = try read("\(path)/proba.f32")
            let timing = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(path)/timing.json")))
                as? [String: Double] ?? [:]
            results[item.name] = Result(
                epochs: features.count / SleepFeatures.names.count, features: features, probabilities: probabilities,
                stageSeconds: timing["stage_s"] ?? .nan, featureSeconds: timing["features_s"] ?? .nan)
        }
        return results
    }

    static func write(_ values: [Double], to path: String) throws {
        let data = values.withUnsafeBufferPointer { Data(buffer: $0) }
        try data.write(to: URL(fileURLWithPath: path))
    }

    static func read<Value: BinaryFloatingPoint>(_ path: String) throws -> [Value] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Value.self)) }
    }
}
