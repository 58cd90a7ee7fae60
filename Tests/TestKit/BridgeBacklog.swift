import Foundation

/// A heart-rate bridge's backlog as NDJSON: `count` notifications of one sensor at `hz`, from the
/// start of the UTC day `daysAgo` days back — what a strap with on-board memory or a bridge that
/// spooled while the agent restarted delivers in one go. Synthesised (a realistic 0x2A37 with
/// contact detected and one RR interval); every line has its own timestamp, so all are stored.
public struct BridgeBacklog: Sendable {
    public let path: String
    public let count: Int
    public let firstMs: Int64
    public let intervalMs: Int64
    /// The UTC day the notifications start on (YYYY-MM-DD).
    public let day: String

    /// What each notification's RR intervals are.
    public enum Beats: Sendable {
        /// One interval matching its bpm in every notification, whatever the rate: at 2 Hz the
        /// intervals add up to 1.2–2× the time they cover, which no strap sends.
        case onePerNotification
        /// The intervals of the beats that ended since the previous notification, as a strap
        /// sends them: none, one or two at 2 Hz, adding up to the time that passed.
        case asAStrapSends
    }

    public init(in directory: TemporaryDirectory, count: Int, hz: Double = 2, daysAgo: Int = 2, sensor: String = "backlog",
                name: String = "backlog.ndjson", beats: Beats = .onePerNotification) throws {
        let dayLength: Int64 = 86_400_000
        let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
        firstMs = (nowMs / dayLength - Int64(daysAgo)) * dayLength
        intervalMs = Int64((1000 / hz).rounded())
        self.count = count
        day = String(Self.timestamp(firstMs).prefix(10))
        path = directory.file(name)
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var chunk = ""
        var nextBeatMs = Double(firstMs)
        for index in 0..<count {
            let timeMs = firstMs + Int64(index) * intervalMs
            switch beats {
            case .onePerNotification:
                chunk += Self.line(index: index, timeMs: timeMs, sensor: sensor) + "\n"
            case .asAStrapSends:
                var intervals: [Int] = []
                while nextBeatMs + Self.rr1024(index: index) * 1000 / 1024 <= Double(timeMs) {
                    intervals.append(Int(Self.rr1024(index: index)))
                    nextBeatMs += Self.rr1024(index: index) * 1000 / 1024
                }
                chunk += Self.line(index: index, timeMs: timeMs, sensor: sensor, rr: intervals) + "\n"
            }
            if chunk.utf8.count > 1 << 20 {
                handle.write(Data(chunk.utf8))
                chunk = ""
            }
        }
        handle.write(Data(chunk.utf8))
    }

    /// An `[hr]` section for a `command` bridge that writes this backlog in one `cat` and then
    /// stays, silent (a restart would replay it; the stall timeout is out of the way).
    public var commandBridge: String { Self.commandBridge(catting: path) }

    public static func commandBridge(catting path: String) -> String {
        """
        [hr]
        transport = "command"
        command = ["/bin/sh", "-c", "cat \(path); exec sleep 1000"]
        stall_timeout_s = 1000

        """
    }

    /// `health.heart_rate.valid_samples` of a query reply.
    public static func validSamples(_ reply: [String: Any]?) -> Int? {
        ((reply?["health"] as? [String: Any])?["heart_rate"] as? [String: Any])?["valid_samples"] as? Int
    }

    /// One bridge message: 60–99 bpm, contact detected, one RR interval matching the rate.
    public static func line(index: Int, timeMs: Int64, sensor: String) -> String {
        line(index: index, timeMs: timeMs, sensor: sensor, rr: [Int(rr1024(index: index))])
    }

    /// One bridge message: 60–99 bpm, contact detected, the RR intervals given (1/1024 s).
    public static func line(index: Int, timeMs: Int64, sensor: String, rr: [Int]) -> String {
        let bpm = 60 + index % 40
        let raw = String(format: rr.isEmpty ? "06%02x" : "16%02x", bpm) + rr.map { String(format: "%02x%02x", $0 & 0xFF, $0 >> 8) }.joined()
        return #"{"ts":"\#(timestamp(timeMs))","seq":\#(index + 1),"sensor":"\#(sensor)","raw":"\#(raw)"}"#
    }

    /// The RR interval (1/1024 s) of notification `index`'s rate.
    static func rr1024(index: Int) -> Double { (60.0 / Double(60 + index % 40) * 1024).rounded() }

    /// `2026-11-21T08:00:01.500Z`.
    public static func timestamp(_ ms: Int64) -> String {
        var seconds = time_t(ms / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour,
            parts.tm_min, parts.tm_sec, Int32(ms % 1000))
    }
}
