import ArgumentParser

/// `keepalive query DATE`: the same reply a `selection/date` request gets, from the local store.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the per-date reply for DATE (YYYY-MM-DD) from the local store.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, geojson, gpx }

    @OptionGroup var options: CommonOptions
    @Argument(help: "The local date, YYYY-MM-DD.") var date: String
    @Option(help: "Reply format.") var format: Format = .json

    func run() throws {
        _ = try options.loadConfig()
        printToStandardError("keepalive query: not available yet in this version (per-date queries are being built)")
        throw ExitCode(69)  // EX_UNAVAILABLE
    }
}

/// `keepalive export`: several days as one GPX, GeoJSON or CSV document.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the days FROM…TO from the local store as GPX, GeoJSON or CSV.")

    enum Format: String, ExpressibleByArgument, CaseIterable { case gpx, geojson, csv }

    @OptionGroup var options: CommonOptions
    @Option(help: "First local date, YYYY-MM-DD.") var from: String
    @Option(help: "Last local date, YYYY-MM-DD.") var to: String
    @Option(help: "Export format.") var format: Format = .gpx
    @Option(help: "Write to this file instead of standard output.") var output: String?

    func run() throws {
        _ = try options.loadConfig()
        printToStandardError("keepalive export: not available yet in this version (exports are being built)")
        throw ExitCode(69)  // EX_UNAVAILABLE
    }
}
