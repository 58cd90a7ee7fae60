import ArgumentParser
import Foundation
import Store

/// `keepalive export`: several days as one GPX, GeoJSON or CSV document, every stored fix,
/// with heart rate.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the local days FROM…TO, or one workout, from the local store as GPX, TCX, GeoJSON or CSV.",
        discussion: """
            GPX and GeoJSON hold the track (every stored fix) with the nearest heart rate; CSV has one row per \
            fix and per heart-rate sample, in time order; timeline-csv one row per 15-minute bucket of each local day \
            (steps, heart rate, distance, moving time: the query's "timeline"). A progress line goes to standard error. \
            With --workout ID (from `keepalive workouts`): that workout as GPX or TCX (what Strava and Garmin Connect import, \
            with heart rate and laps per km).
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case gpx, tcx, geojson, csv
        case timelineCSV = "timeline-csv"
    }

    @OptionGroup var options: CommonOptions
    @Option(help: "First local date, YYYY-MM-DD.") var from: String?
    @Option(help: "Last local date, YYYY-MM-DD.") var to: String?
    @Option(help: "One workout by its id, as GPX or TCX (instead of --from/--to).") var workout: String?
    @Option(help: "Export format.") var format: Format = .gpx
    @Option(help: "Write to this file instead of standard output.") var output: String?

    func run() throws {
        AgentLogging.bootstrap(level: options.logLevel.level)
        let config = try options.loadConfig()
        if let workout { return try export(workout: workout, config: config) }
        guard let from, let to else { throw ValidationError("give --from and --to (local dates), or --workout ID") }
        guard format != .tcx else { throw ValidationError("TCX holds one workout: use --workout ID") }
        let settings = AggregateSettings(config: config)
        let engine = QueryEngine(storePath: config.store.path, settings: settings, maxReplyBytes: .max, deviceID: config.device.id)
        engine.carriesDays = false
        let now = AgentClock.commandLine(storePath: config.store.path).now()
        let first: LocalDay
        let last: LocalDay
        do {
            first = try engine.day(of: from, now: now)
            last = try engine.day(of: to, now: now)
        } catch let error as QueryError {
            throw ValidationError(error.message)
        }
        guard first <= last else { throw ValidationError("--from \(from) is after --to \(to)") }
        let sink = try ExportSink(path: output)
        var days: [LocalDay] = [first]
        while let current = days.last, current < last { days.append(current.next) }

        let progress = ProgressLine(enabled: days.count > 1)
        switch format {
        case .gpx: sink.write(GPXWriter.header(creator: engine.creator, name: "\(first) – \(last)"))
        case .tcx: break
        case .geojson: sink.write(#"{"type":"FeatureCollection","features":["#)
        case .csv: sink.write(CSVRows.header)
        case .timelineCSV: sink.write(DayTimeline.csvHeader)
        }
        var points = 0
        for (index, day) in days.enumerated() {
            progress.show("exporting \(day) (\(index + 1)/\(days.count) days, \(points) points)")
            if format == .timelineCSV {
                sink.write(try engine.timelineCSV(of: day))
                continue
            }
            let report: DayReport
            do {
                report = try engine.report(
                    day, include: format == .geojson ? [.health] : [], track: .full, heartRateTimeline: format != .csv, now: now)
            } catch let error as QueryError {
                throw ValidationError(error.message)
            }
            points += report.track?.count ?? 0
            switch format {
            case .gpx: sink.write(report.gpxTrack)
            case .geojson: sink.write((index > 0 ? "," : "") + GeoJSONDocument.feature(report).text)
            case .csv: sink.write(try CSVRows.day(report, engine: engine))
            case .timelineCSV, .tcx: break
            }
        }
        switch format {
        case .gpx: sink.write(GPXWriter.footer)
        case .geojson: sink.write("]}\n")
        case .csv, .timelineCSV, .tcx: break
        }
        try sink.finish()
        progress.finish("exported \(days.count) day(s), \(points) track points")
    }
}

extension ExportCommand {
    private func export(workout id: String, config: AgentConfig) throws {
        guard format == .gpx || format == .tcx else { throw ValidationError("a workout exports as gpx or tcx") }
        let reader = try StoreReader(path: config.store.path)
        guard let workout = try reader.read({ try $0.workout(id: id) }) else {
            throw ValidationError("no workout \(id) in \(config.store.path) (keepalive workouts lists them)")
        }
        let (summary, points) = try WorkoutExport.build(
            workout, reader: reader, settings: AggregateSettings(config: config), workoutSettings: config.workouts)
        let creator = "KeepAlive \(KeepAliveVersion.string) (\(config.device.id))"
        let sink = try ExportSink(path: output)
        sink.write(
            format == .tcx
                ? WorkoutTCXDocument.document(summary, points: points, creator: creator)
                : WorkoutGPXDocument.document(summary, points: points, creator: creator))
        try sink.finish()
    }
}

/// Standard output, or a file written in place of the old one only when complete.
private final class ExportSink {
    private let handle: FileHandle
    private let temporary: String?
    private let destination: String?

    init(path: String?) throws {
        guard let path else {
            handle = FileHandle.standardOutput
            temporary = nil
            destination = nil
            return
        }
        let temporaryPath = path + ".partial"
        guard FileManager.default.createFile(atPath: temporaryPath, contents: nil), let opened = FileHandle(forWritingAtPath: temporaryPath) else {
            throw ValidationError("cannot write \(path)")
        }
        handle = opened
        temporary = temporaryPath
        destination = path
    }

    private var finished = false

    func write(_ text: String) { handle.write(Data(text.utf8)) }

    /// The export is complete: the file takes its name.
    func finish() throws {
        finished = true
        guard let temporary, let destination else { return }
        try handle.close()
        guard rename(temporary, destination) == 0 else { throw ValidationError("cannot rename \(temporary) to \(destination)") }
    }

    deinit {
        guard !finished, let temporary else { return }
        try? handle.close()
        unlink(temporary)
    }
}

/// One line on standard error, redrawn in place on a terminal, a line per step otherwise.
private struct ProgressLine {
    let enabled: Bool
    private let terminal = isatty(STDERR_FILENO) == 1

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ text: String) {
        guard enabled else { return }
        printToStandardError(terminal ? "\r\u{1B}[K" + text : text, terminator: terminal ? "" : "\n")
    }

    func finish(_ text: String) {
        guard enabled else { return }
        printToStandardError(terminal ? "\r\u{1B}[K" + text : text)
    }
}
