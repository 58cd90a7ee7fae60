import Foundation
import Logging

/// A swift-log handler writing one line per event to stderr, in the form journald reads:
/// a `<N>` syslog priority prefix (systemd's `SyslogLevelPrefix=`), then `label: message key=value…`.
/// On a terminal the prefix is replaced by a readable level name.
public struct StderrLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let label: String
    private let journald: Bool

    public init(label: String, level: Logger.Level, journald: Bool = StderrLogHandler.stderrIsJournal) {
        self.label = label
        self.logLevel = level
        self.journald = journald
    }

    /// systemd sets JOURNAL_STREAM when stderr is connected to the journal.
    public static var stderrIsJournal: Bool {
        ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = journald ? "<\(Self.syslogPriority(event.level))>" : "\(Self.timestamp()) \(event.level.rawValue.uppercased()) "
        line += "\(label): \(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(Self.quoteIfNeeded("\(value)"))"
        }
        line += "\n"
        // One write(2) per line, so lines from different threads never interleave.
        line.utf8CString.withUnsafeBufferPointer { buffer in
            _ = write(STDERR_FILENO, buffer.baseAddress, buffer.count - 1)
        }
    }

    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    private static func quoteIfNeeded(_ value: String) -> String {
        value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) || value.isEmpty
            ? "\"" + value.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : value
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, now.tv_nsec / 1_000_000)
    }
}

public enum AgentLogging {
    /// Installs the stderr handler for the whole process; call once, first thing.
    public static func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in StderrLogHandler(label: label, level: level) }
    }
}
