import ArgumentParser
import Foundation
import Store

/// `keepalive workouts --from --to`: the finished workouts that started on those local days,
/// one record per line, as `workout/last` carries them (read from the local store).
struct WorkoutsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workouts",
        abstract: "List the workouts of the local days FROM…TO (one JSON record per line).")

    @OptionGroup var options: CommonOptions
    @Option(help: "First local date, YYYY-MM-DD (default: 30 days ago).") var from: String?
    @Option(help: "Last local date, YYYY-MM-DD (default: today).") var to: String?

    func run() throws {
        let config = try options.loadConfig()
        let settings = AggregateSettings(config: config)
        let now = AgentClock.commandLine(storePath: config.store.path).now()
        let today = LocalDay(containing: now, timeZone: settings.timeZone)
        func day(_ text: String?, default fallback: LocalDay) throws -> LocalDay {
            guard let text else { return fallback }
            guard let day = LocalDay(text, timeZone: settings.timeZone) else { throw ValidationError("\(text) is not a date (YYYY-MM-DD)") }
            return day
        }
        let last = try day(to, default: today)
        let first = try day(from, default: LocalDay(containing: now.addingTimeInterval(-30 * 86_400), timeZone: settings.timeZone))
        guard first <= last else { throw ValidationError("--from is after --to") }
        let reader = try StoreReader(path: config.store.path)
        let workouts = try reader.read { try $0.workouts(fromMs: first.boundsMs.start, toMs: last.boundsMs.end) }
        for workout in workouts { print(workout.publishedJSON()) }
    }
}
