import Foundation
import SleepStaging

// `swift build --package-path Benchmarks -c release --product keepalive-sleep-bench && Benchmarks/.build/release/keepalive-sleep-bench`
//
// What classifying a night costs: a 9-hour night assembled from the real hour of RR intervals the
// repository ships (Tests/Fixtures/hr/nsr-60min.ndjson; nine copies, every other one reversed),
// turned into 1 Hz strap notifications as the agent stores them, then rebuilt into beats,
// featurised, classified and cut into periods — CPU time of this process, best of 5 runs.
// Baseline, same night, same machine: the real sleepecg 0.6.0 `stage()` (features + Keras model,
// numpy backend) in the venv of scripts/sleepecg/venv.sh, its own process CPU time, best of 3.
// `--no-python` leaves the baseline out.

// The agent's package root (this file is Benchmarks/Sources/SleepBench/main.swift).
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func best(of runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var fastest = Double.infinity
    for _ in 0..<runs {
        let began = cpuSeconds()
        try body()
        fastest = min(fastest, cpuSeconds() - began)
    }
    return fastest
}

/// The fixture's intervals in ms, nine hours of them, as 1 Hz notifications in 1/1024 s.
func assembledNight() throws -> [HeartRateNotification] {
    var hour: [Int] = []
    for line in try String(contentsOfFile: "\(root)/Tests/Fixtures/hr/nsr-60min.ndjson", encoding: .utf8).split(separator: "\n") {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        hour += object?["rr"] as? [Int] ?? []
    }
    var intervals: [Int] = []
    for copy in 0..<9 { intervals += copy % 2 == 0 ? hour : hour.reversed() }
    let startMs: Int64 = 1_795_215_600_000  // 2026-11-20T22:00:00Z
    var notifications: [HeartRateNotification] = []
    var endMs: Int64 = 0
    var pending: [Int] = []
    var second: Int64 = 1
    for interval in intervals {
        endMs += Int64(interval)
        while endMs > second * 1000 {
            notifications.append(HeartRateNotification(timeMs: startMs + second * 1000, rr1024: pending))
            pending = []
            second += 1
        }
        pending.append(Int((Double(interval) * 1.024).rounded()))
    }
    return notifications
}

let notifications = try assembledNight()
var recording: SleepRecording?
var epochs: [SleepEpoch] = []
var night: NightSleep?

let rebuild = try best(of: 5) {
    var builder = RRSeriesBuilder()
    builder.add(contentsOf: notifications)
    recording = try builder.recording(utcOffsetSeconds: 3600)
}
guard let recording else { fatalError("no recording") }
let featuresOnly = best(of: 5) { _ = SleepFeatures(recording) }
let classify = best(of: 5) { epochs = WakeSleepClassifier.classify(recording) }
let periods = best(of: 5) { night = SleepPeriods.find(in: epochs) }
let total = rebuild + classify + periods
// The agent's path (issue 32): the night on the absolute 30-s grid, every epoch's vector kept, then
// the night again from the kept vectors: fingerprints of each epoch's beats, the network.
let aligned = try recording.alignedToEpochGrid()
var kept: [EpochFeatureVector] = []
let keepAll = best(of: 5) { kept = EpochFeatures.compute(aligned.rr, epochs: Array(0..<aligned.rr.epochCount)) }
let fingerprints = best(of: 5) { _ = EpochFeatures.inputs(of: aligned) }
let fromKept = best(of: 5) { _ = WakeSleepClassifier.classify(aligned, vectors: kept) }
let hours = recording.rr.duration / 3600

var pythonCPU = Double.nan
if !CommandLine.arguments.contains("--no-python") {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sleep-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let beats = [0.0] + recording.rr.endTimes
    try beats.withUnsafeBufferPointer { Data(buffer: $0) }.write(to: directory.appendingPathComponent("heartbeats.f64"))
    let clock = recording.startClockSeconds
    let start = String(format: "%02d:%02d:%02d", clock / 3600, clock / 60 % 60, clock % 60)
    try Data("{\"start\": \"\(start)\"}".utf8).write(to: directory.appendingPathComponent("record.json"))

    func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["KERAS_BACKEND": "numpy"]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            FileHandle.standardError.write(Data("\(executable) failed:\n\(text.suffix(2000))\n".utf8))
            exit(1)
        }
        return text
    }
    let python = try run("/bin/bash", ["\(root)/scripts/sleepecg/venv.sh"])
        .split(separator: "\n").last { $0.hasSuffix("/bin/python") }.map(String.init) ?? ""
    _ = try run(python, ["\(root)/scripts/sleepecg/reference.py", "--repeat=3", directory.path])
    let timing = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent("timing.json")))
    pythonCPU = (timing as? [String: Double])?["stage_cpu_s"] ?? .nan
}

func ms(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
print("night: \(String(format: "%.2f", hours)) h, \(notifications.count) notifications, \(recording.rr.intervals.count) RR intervals, \(epochs.count) epochs")
if let main = night?.main {
    print("main sleep period: \(main.sleepSeconds / 60) min asleep of \(main.inBedSeconds / 60), \(main.awakenings) awakenings; naps: \(night?.naps.count ?? 0)")
} else {
    print("main sleep period: none")
}
print("")
print("| step | CPU per night | baseline | baseline CPU | ratio |")
print("|---|---|---|---|---|")
print("| rebuild beats from notifications | \(ms(rebuild)) | | | |")
print("| 36 features per epoch | \(ms(featuresOnly)) | | | |")
print("| network | \(ms(classify - featuresOnly)) | | | |")
print("| features + network | \(ms(classify)) | sleepecg 0.6.0 stage() | \(pythonCPU.isNaN ? "—" : ms(pythonCPU)) | \(pythonCPU.isNaN ? "—" : String(format: "%.3f×", classify / pythonCPU)) |")
print("| sleep periods | \(ms(periods)) | | | |")
print("| every epoch's vector, to keep (once per epoch) | \(ms(keepAll)) | | | |")
print("| the night again from kept vectors: fingerprints + network | \(ms(fingerprints + fromKept)) | features + network | \(ms(classify)) | \(String(format: "%.3f×", (fingerprints + fromKept) / classify)) |")
print("| whole night | \(ms(total)) | | | |")
print("")
print(String(format: "once a night: %.4f %% of one core over the day (budget 1 %%)", total / 86_400 * 100))
print(String(format: "every 5 minutes over a 12-hour window (144 runs of up to 12 h): at most %.3f %% of one core over the day",
             total * (12 / hours) * 144 / 86_400 * 100))
