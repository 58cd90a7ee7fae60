import Foundation
import Testing
import TestKit
@testable import Agent

/// The workout documents as their real consumers read them: the TCX against Garmin's own
/// TrainingCenterDatabase v2 schema and the GPX against GPX 1.1's (both in Tests/Fixtures/xsd,
/// checked by xmllint), and the GPX through gpxpy, the parser most Python track tools use
/// (scripts/workout-export/check_gpx.py, in a venv made once by scripts/python-venv.sh).
@Suite("Workout export: GPX and TCX")
struct WorkoutExportTests {
    static let creator = "KeepAlive test"

    @Test("a 20-minute run's TCX is valid against Garmin's schema: a lap per km and the rest, heart rate and run cadence on every point")
    func runTCX() async throws {
        let (summary, points) = ExportSamples.loopRun()
        let tcx = WorkoutTCXDocument.document(summary, points: points, creator: Self.creator)
        #expect(tcx.hasPrefix("<?xml"))
        let directory = try TemporaryDirectory("workout-export")
        let file = try directory.write("run.tcx", tcx)
        let check = try await ExportConsumers.validate(file, schema: "TrainingCenterDatabasev2.xsd")
        #expect(check.status == 0 && check.text.contains("validates"), "xmllint refused the TCX:\n\(check.text.suffix(3000))")

        #expect(summary.splitEndsMs.count == 3)
        #expect(try await ExportConsumers.xpath("count(//*[local-name()='Lap'])", file) == "4")
        #expect(try await ExportConsumers.xpath("string(//*[local-name()='Activity']/@Sport)", file) == "Running")
        let lapDistance = try #require(Double(try await ExportConsumers.xpath("sum(//*[local-name()='Lap']/*[local-name()='DistanceMeters'])", file)))
        #expect(abs(lapDistance - summary.distanceM) < 0.05, "laps add up to \(lapDistance) m, the summary says \(summary.distanceM) m")
        let lapSeconds = try #require(Double(try await ExportConsumers.xpath("sum(//*[local-name()='Lap']/*[local-name()='TotalTimeSeconds'])", file)))
        #expect(abs(lapSeconds - Double(summary.endMs - summary.startMs) / 1000) < 0.01)
        #expect(try await ExportConsumers.xpath("count(//*[local-name()='Trackpoint'])", file) == "\(points.count)")
        #expect(try await ExportConsumers.xpath("count(//*[local-name()='HeartRateBpm'])", file) == "\(points.count)")
        #expect(try await ExportConsumers.xpath("count(//*[local-name()='RunCadence'])", file) == "\(points.count)")
        let lapMaximum = try await ExportConsumers.xpath("string(//*[local-name()='Lap'][last()]/*[local-name()='MaximumHeartRateBpm']/*)", file)
        let lastLap = points.filter { $0.timeMs >= (summary.splitEndsMs.last ?? 0) }.compactMap(\.heartRate)
        #expect(lapMaximum == "\(lastLap.max() ?? 0)")
        #expect(try await ExportConsumers.xpath("string(//*[local-name()='Lap'][1]/*[local-name()='TriggerMethod'])", file) == "Distance")
        #expect(try await ExportConsumers.xpath("string(//*[local-name()='Lap'][last()]/*[local-name()='TriggerMethod'])", file) == "Manual")
    }

    @Test("the same run's GPX is valid GPX 1.1, and gpxpy reads its length (within 2 %), duration, heart rates and cadence")
    func runGPX() async throws {
        let (summary, points) = ExportSamples.loopRun()
        let gpx = WorkoutGPXDocument.document(summary, points: points, creator: Self.creator)
        #expect(gpx.hasPrefix("<?xml"))
        let directory = try TemporaryDirectory("workout-export")
        let file = try directory.write("run.gpx", gpx)
        let check = try await ExportConsumers.validate(file, schema: "gpx-1.1.xsd")
        #expect(check.status == 0 && check.text.contains("validates"), "xmllint refused the GPX:\n\(check.text.suffix(3000))")

        let read = try await ExportConsumers.gpxpy(file)
        #expect(read.tracks == 1 && read.points == points.count)
        #expect(abs(read.length2d - summary.distanceM) / summary.distanceM < 0.02,
                "gpxpy's length \(read.length2d) m against the summary's \(summary.distanceM) m")
        #expect(read.duration == Double(summary.endMs - summary.startMs) / 1000)
        #expect(read.hr == points.compactMap(\.heartRate))
        #expect(read.cad == points.compactMap { $0.cadence.map { $0 / 2 } })
        #expect(read.elevations == points.count)
        #expect(read.type == "running" && read.creator == Self.creator)
        #expect(read.first == "2026-11-21T08:00:00+00:00", "whole seconds are written without a fraction")
        #expect(read.name == "Run 2026-11-21T08:00:00Z")
    }

    enum EdgeCase: String, CaseIterable, Sendable {
        case noHeartRate, noAltitude, creatorNeedingEscapes, walkWithFractionalSeconds, underOneKilometre
    }

    @Test("edge cases are valid against both schemas and read by gpxpy", arguments: EdgeCase.allCases)
    func edgeCase(_ edge: EdgeCase) async throws {
        var (summary, points) = ExportSamples.loopRun()
        var creator = Self.creator
        switch edge {
        case .noHeartRate:
            points = points.map { var point = $0; point.heartRate = nil; return point }
            summary.avgHR = nil
            summary.maxHR = nil
        case .noAltitude:
            points = points.map { var point = $0; point.altitudeM = nil; return point }
        case .creatorNeedingEscapes:
            // A control character XML cannot carry at all, and every character it must escape.
            creator = "Keep<Alive> & \"Pi\" 'edge' \u{1}5"
        case .walkWithFractionalSeconds:
            (summary, points) = ExportSamples.loopRun(sport: "walk", speedMps: 1.4, offsetMs: 250)
        case .underOneKilometre:
            (summary, points) = ExportSamples.loopRun(seconds: 300)
        }
        let directory = try TemporaryDirectory("workout-export")
        let tcx = try directory.write("edge.tcx", WorkoutTCXDocument.document(summary, points: points, creator: creator))
        let gpx = try directory.write("edge.gpx", WorkoutGPXDocument.document(summary, points: points, creator: creator))
        let tcxCheck = try await ExportConsumers.validate(tcx, schema: "TrainingCenterDatabasev2.xsd")
        #expect(tcxCheck.status == 0, "xmllint refused the TCX (\(edge)):\n\(tcxCheck.text.suffix(3000))")
        let gpxCheck = try await ExportConsumers.validate(gpx, schema: "gpx-1.1.xsd")
        #expect(gpxCheck.status == 0, "xmllint refused the GPX (\(edge)):\n\(gpxCheck.text.suffix(3000))")
        let read = try await ExportConsumers.gpxpy(gpx)
        #expect(read.points == points.count)
        #expect(abs(read.length2d - summary.distanceM) / summary.distanceM < 0.02)

        switch edge {
        case .noHeartRate:
            #expect(read.hr.isEmpty)
            #expect(try await ExportConsumers.xpath("count(//*[local-name()='HeartRateBpm' or local-name()='AverageHeartRateBpm'])", tcx) == "0")
        case .noAltitude:
            #expect(read.elevations == 0)
            #expect(try await ExportConsumers.xpath("count(//*[local-name()='AltitudeMeters'])", tcx) == "0")
        case .creatorNeedingEscapes:
            #expect(read.creator == "Keep<Alive> & \"Pi\" 'edge' 5")
            #expect(try await ExportConsumers.xpath("string(//*[local-name()='Creator']/*[local-name()='Name'])", tcx) == "Keep<Alive> & \"Pi\" 'edge' 5")
        case .walkWithFractionalSeconds:
            #expect(read.type == "walking" && read.first == "2026-11-21T08:00:00.250000+00:00")
            #expect(try await ExportConsumers.xpath("string(//*[local-name()='Activity']/@Sport)", tcx) == "Other")
            #expect(read.cad.count == points.count)
        case .underOneKilometre:
            #expect(summary.splitEndsMs.isEmpty && summary.distanceM < 1000)
            #expect(try await ExportConsumers.xpath("count(//*[local-name()='Lap'])", tcx) == "1")
            #expect(try await ExportConsumers.xpath("string(//*[local-name()='Lap']/*[local-name()='TriggerMethod'])", tcx) == "Manual")
            let distance = try #require(Double(try await ExportConsumers.xpath("string(//*[local-name()='Lap']/*[local-name()='DistanceMeters'])", tcx)))
            #expect(abs(distance - summary.distanceM) < 0.01)
        }
    }

    @Test("the validation bites: elements out of the XSD's order, or a sport it does not list, fail xmllint")
    func brokenDocumentsFail() async throws {
        let (summary, points) = ExportSamples.loopRun(seconds: 120)
        let tcx = WorkoutTCXDocument.document(summary, points: points, creator: Self.creator)
        let gpx = WorkoutGPXDocument.document(summary, points: points, creator: Self.creator)
        let tcxSchema = "TrainingCenterDatabasev2.xsd"
        let broken: [(name: String, text: String, schema: String, expected: String)] = [
            ("tcx-calories-first", try ExportSamples.replacingFirst(
                "<TotalTimeSeconds>", with: "<Calories>0</Calories><TotalTimeSeconds>", in: tcx.replacingOccurrences(of: "<Calories>0</Calories>", with: "")),
             tcxSchema, "Calories': This element is not expected"),
            ("tcx-heart-rate-before-position", try ExportSamples.movingFirst(
                #"<HeartRateBpm><Value>\d+</Value></HeartRateBpm>"#, before: "<Position>", in: tcx),
             tcxSchema, "Position': This element is not expected"),
            ("tcx-sport-walking", tcx.replacingOccurrences(of: "Sport=\"Running\"", with: "Sport=\"Walking\""), tcxSchema, "'Walking'"),
            ("gpx-time-before-ele", try ExportSamples.movingFirst(#"<time>[^<]+</time>"#, before: "<ele>", in: gpx, after: "<trkpt"),
             "gpx-1.1.xsd", "ele': This element is not expected"),
        ]
        let directory = try TemporaryDirectory("workout-export")
        for document in broken {
            let file = try directory.write(document.name, document.text)
            let check = try await ExportConsumers.validate(file, schema: document.schema)
            #expect(check.status != 0 && check.text.contains("fails to validate"), "xmllint took \(document.name):\n\(check.text.suffix(2000))")
            // Refused for the change made, not for something else: xmllint names the element or value.
            #expect(check.text.contains(document.expected), "\(document.name): \(check.text.suffix(2000))")
        }
    }

    @Test("laps: splits outside the workout or out of order are dropped, and the laps hold every point and the summary's distance")
    func laps() {
        let (summary, points) = ExportSamples.loopRun()
        var messy = summary
        messy.splitEndsMs = [summary.splitEndsMs[1], summary.startMs - 5, summary.splitEndsMs[0], summary.endMs + 5, summary.splitEndsMs[2], summary.splitEndsMs[0]]
        let laps = WorkoutTCXDocument.Lap.laps(messy, points: points.reversed())
        #expect(laps.map(\.startMs) == [summary.startMs] + summary.splitEndsMs)
        #expect(laps.map(\.byDistance) == [true, true, true, false])
        #expect(laps.map(\.points.count).reduce(0, +) == points.count)
        #expect(abs(laps.map(\.distanceM).reduce(0, +) - summary.distanceM) < 1e-6)
        for lap in laps where lap.byDistance { #expect(lap.points.allSatisfy { $0.timeMs >= lap.startMs && $0.timeMs < lap.endMs }) }
        #expect(laps.last?.points.allSatisfy { $0.timeMs >= summary.splitEndsMs[2] } == true)
        #expect(ExportText.time(1_795_248_000_000) == "2026-11-21T08:00:00Z")
        #expect(ExportText.time(1_795_248_000_250) == "2026-11-21T08:00:00.250Z")
        #expect(ExportText.footCadence(170, sport: "run") == 85 && ExportText.footCadence(170, sport: "cycle") == nil)
    }
}

/// Synthesised workouts: nothing here was recorded from a device.
enum ExportSamples {
    /// Laps of a 1.2 km loop (a circle in a park) at 1 Hz from 2026-11-21T08:00:00Z: speed
    /// around `speedMps`, GPS wander as a slow random walk of about half a metre, heart rate
    /// climbing from 95 towards 160 bpm with a ripple, a cadence near 168 steps/min and a metre or
    /// two of height. The distance is the agent's own (Geodesy between fixes), the splits where it
    /// passes each whole km.
    static func loopRun(sport: String = "run", seconds: Int = 1200, speedMps: Double = 3.0, offsetMs: Int64 = 0) -> (WorkoutExportSummary, [WorkoutTrackPoint]) {
        var random = SplitMix(seed: 0x5EED_2026)
        let startMs: Int64 = 1_795_248_000_000 + offsetMs
        let (centreLat, centreLon, radius) = (52.3580, 4.8686, 1200.0 / (2 * Double.pi))
        var (along, wanderNorth, wanderEast, distance) = (0.0, 0.0, 0.0, 0.0)
        var points: [WorkoutTrackPoint] = []
        var splits: [Int64] = []
        for second in 0..<seconds {
            let t = Double(second)
            along += speedMps * (1 + 0.06 * sin(t / 60)) + 0.1 * (random.nextUnit() - 0.5)
            wanderNorth = 0.97 * wanderNorth + 0.25 * (random.nextUnit() - 0.5)
            wanderEast = 0.97 * wanderEast + 0.25 * (random.nextUnit() - 0.5)
            let angle = along / radius
            let lat = centreLat + (radius * cos(angle) + wanderNorth) / 111_195
            let lon = centreLon + (radius * sin(angle) + wanderEast) / (111_195 * cos(centreLat * .pi / 180))
            if let previous = points.last {
                distance += Geodesy.distanceM(lat1: previous.lat, lon1: previous.lon, lat2: lat, lon2: lon)
            }
            let timeMs = startMs + Int64(second) * 1000
            if distance >= Double(splits.count + 1) * 1000 { splits.append(timeMs) }
            let heartRate = 95 + 65 * (1 - exp(-t / 90)) + 3 * sin(t / 45) + 4 * (random.nextUnit() - 0.5)
            points.append(WorkoutTrackPoint(
                timeMs: timeMs, lat: lat, lon: lon, altitudeM: 2 + 1.5 * sin(angle), heartRate: Int(heartRate.rounded()),
                distanceM: distance, cadence: 168 + Int((2 * sin(t / 30)).rounded())))
        }
        let heartRates = points.compactMap(\.heartRate)
        let endMs = points.last?.timeMs ?? startMs
        let summary = WorkoutExportSummary(
            id: "3F2504E0-4F89-41D3-9A0C-0305E82C3301", sport: sport, startMs: startMs, endMs: endMs,
            movingS: Double(endMs - startMs) / 1000, distanceM: distance,
            avgHR: heartRates.isEmpty ? nil : heartRates.reduce(0, +) / heartRates.count, maxHR: heartRates.max(), splitEndsMs: splits)
        return (summary, points)
    }

    struct NotFound: Error, CustomStringConvertible { let description: String }

    static func replacingFirst(_ target: String, with replacement: String, in text: String) throws -> String {
        guard let range = text.range(of: target) else { throw NotFound(description: "no \(target) to break") }
        return text.replacingCharacters(in: range, with: replacement)
    }

    /// Moves the first match of `pattern` after `start` to just before the `anchor` in front of it.
    static func movingFirst(_ pattern: String, before anchor: String, in text: String, after start: String = "") throws -> String {
        let from = start.isEmpty ? text.startIndex : (text.range(of: start)?.lowerBound ?? text.endIndex)
        guard let match = text.range(of: pattern, options: .regularExpression, range: from..<text.endIndex),
              let place = text.range(of: anchor, options: .backwards, range: text.startIndex..<match.lowerBound)
        else { throw NotFound(description: "no \(pattern) after \(anchor) to move") }
        let moved = String(text[match])
        var result = text
        result.removeSubrange(match)
        result.insert(contentsOf: moved, at: place.lowerBound)
        return result
    }
}

/// The consumers, run as processes with bounded waits. Missing tools fail the test with what
/// should have installed them, never a silent skip.
enum ExportConsumers {
    struct Missing: Error, CustomStringConvertible { let description: String }

    struct GPXReport: Decodable {
        var creator: String?
        var tracks: Int
        var name: String?
        var type: String?
        var points: Int
        var length2d: Double
        var duration: Double?
        var first: String?
        var elevations: Int
        var hr: [Int]
        var cad: [Int]
    }

    static func xmllint() throws -> String {
        let path = Tools.find("xmllint")
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Missing(description: "xmllint is not installed: scripts/setup.sh installs it (Debian package libxml2-utils)")
        }
        return path
    }

    static func run(_ name: String, _ executable: String, _ arguments: [String], timeout: Double) async throws -> (status: Int32, text: String) {
        let process = try ManagedProcess(name: name, executable: executable, arguments: arguments)
        guard let status = await process.waitForExit(timeout: timeout) else {
            process.stop(timeout: 2)
            throw WaitTimeout(description: "\(name) did not finish within \(timeout) s; it printed:\n\(process.text.suffix(2000))")
        }
        return (status, process.text)
    }

    /// xmllint against a schema vendored in Tests/Fixtures/xsd; --nonet so that no schemaLocation
    /// in the document is fetched instead.
    static func validate(_ file: String, schema: String) async throws -> (status: Int32, text: String) {
        try await run("xmllint --schema \(schema)", try xmllint(), ["--noout", "--nonet", "--schema", Tools.fixture("xsd/\(schema)"), file], timeout: 60)
    }

    /// What an XPath expression gives for the file, read by libxml2 like any other consumer.
    static func xpath(_ expression: String, _ file: String) async throws -> String {
        let result = try await run("xmllint --xpath", try xmllint(), ["--nonet", "--xpath", expression, file], timeout: 60)
        guard result.status == 0 else { throw Missing(description: "xmllint --xpath \(expression) failed (\(result.status)): \(result.text.suffix(1000))") }
        return result.text
    }

    /// The venv's python, made once per test run (and once per machine: scripts/python-venv.sh caches it).
    static let python = Task<String, any Error> {
        let root = Tools.packageRoot
        let made = try await run(
            "python-venv.sh workout-export", "/bin/bash",
            ["\(root)/scripts/python-venv.sh", "\(root)/scripts/workout-export/requirements.txt", "workout-export"], timeout: 600)
        guard made.status == 0, let python = made.text.split(separator: "\n").last.map(String.init), python.hasSuffix("/bin/python") else {
            throw Missing(description: "no gpxpy venv: scripts/python-venv.sh needs python3 (installed by scripts/setup.sh) and PyPI; it printed:\n\(made.text.suffix(2000))")
        }
        return python
    }

    static func gpxpy(_ file: String) async throws -> GPXReport {
        let result = try await run(
            "check_gpx.py", try await python.value, ["\(Tools.packageRoot)/scripts/workout-export/check_gpx.py", file], timeout: 120)
        let prefix = "check_gpx: "
        guard result.status == 0, let line = result.text.split(separator: "\n").last(where: { $0.hasPrefix(prefix) }) else {
            throw Missing(description: "gpxpy did not read \(file) (\(result.status)):\n\(result.text.suffix(2000))")
        }
        return try JSONDecoder().decode(GPXReport.self, from: Data(line.dropFirst(prefix.count).utf8))
    }
}
