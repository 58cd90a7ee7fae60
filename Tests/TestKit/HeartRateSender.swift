import Foundation
import Synchronization

/// A bridge sending one heart-rate message every 1/`hz` s over UDP, stamped with its send time,
/// remembering what it sent. With `rr`, each notification carries one RR interval (as a chest
/// strap's do: 0x2A37 flags 0x16), the beat length at its bpm.
public final class HeartRateSender: Sendable {
    private struct State {
        var sent: [Int64] = []
        var stopped = false
        var paused = false
    }
    private let state = Mutex(State())

    public init(port: Int, hz: Double, sensor: String = "fault", rr: Bool = false) {
        let thread = Thread { [self] in
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            var beat = 0
            while !state.withLock({ $0.stopped }) {
                if !state.withLock({ $0.paused }) {
                    let now = Date()
                    let ms = Int64((now.timeIntervalSince1970 * 1000).rounded())
                    let bpm = 60 + beat % 40
                    let interval = 61_440 / bpm  // 1/1024 s
                    let raw = rr ? String(format: "16%02x%02x%02x", bpm, interval & 0xFF, interval >> 8) : String(format: "06%02x", bpm)
                    UDPSender.send(port: port, lines: [#"{"ts":"\#(formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000)))","sensor":"\#(sensor)","raw":"\#(raw)"}"#])
                    state.withLock { $0.sent.append(ms) }
                    beat += 1
                }
                usleep(useconds_t(1_000_000 / hz))  // the sensor's own rate
            }
        }
        thread.start()
    }

    public func sentTimes(from: Int64, to: Int64) -> [Int64] { state.withLock { $0.sent.filter { $0 >= from && $0 <= to } } }
    public func pause() { state.withLock { $0.paused = true } }
    public func resume() { state.withLock { $0.paused = false } }
    public func stop() { state.withLock { $0.stopped = true } }
}
