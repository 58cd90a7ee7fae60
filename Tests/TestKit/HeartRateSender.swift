import Foundation

/// A bridge sending one heart-rate message every 1/`hz` s over UDP, stamped with its send time,
/// remembering what it sent. With `rr`, each notification carries one RR interval (as a chest
/// strap's do: 0x2A37 flags 0x16), the beat length at its bpm.
public final class HeartRateSender: @unchecked Sendable {
    private let lock = NSLock()
    private var sent: [Int64] = []
    private var stopped = false
    private var paused = false

    public init(port: Int, hz: Double, sensor: String = "fault", rr: Bool = false) {
        let thread = Thread { [self] in
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            var beat = 0
            while !lock.withLock({ stopped }) {
                if !lock.withLock({ paused }) {
                    let now = Date()
                    let ms = Int64((now.timeIntervalSince1970 * 1000).rounded())
                    let bpm = 60 + beat % 40
                    let interval = 61_440 / bpm  // 1/1024 s
                    let raw = rr ? String(format: "16%02x%02x%02x", bpm, interval & 0xFF, interval >> 8) : String(format: "06%02x", bpm)
                    UDPSender.send(port: port, lines: [#"{"ts":"\#(formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000)))","sensor":"\#(sensor)","raw":"\#(raw)"}"#])
                    lock.withLock { sent.append(ms) }
                    beat += 1
                }
                usleep(useconds_t(1_000_000 / hz))  // the sensor's own rate
            }
        }
        thread.start()
    }

    public func sentTimes(from: Int64, to: Int64) -> [Int64] { lock.withLock { sent.filter { $0 >= from && $0 <= to } } }
    public func pause() { lock.withLock { paused = true } }
    public func resume() { lock.withLock { paused = false } }
    public func stop() { lock.withLock { stopped = true } }
}
