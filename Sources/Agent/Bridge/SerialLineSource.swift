import Foundation
import Logging
import Supervision

/// Bridge messages as NDJSON lines from a tty (`[hr] transport = "serial"`), in raw mode at
/// `baud`. `reacquire()` closes and reopens the device; an unplugged device is reopened with a
/// capped backoff until it comes back.
final class SerialLineSource: BridgeTransport, Sendable {
    let name = "serial"
    private let thread: TransportThread
    var events: HeartRateTransportEvents { thread.events }
    private var shouldStop: Bool { thread.shouldStop }
    private let path: String
    private let speed: speed_t
    private let maxLineBytes: Int
    private let reopenMaxS: Double
    private let logger: Logger

    init(path: String, baud: Int, maxLineBytes: Int, reopenMaxS: Double, logger: Logger) {
        self.path = path
        self.speed = LineSpeed.termios[baud] ?? speed_t(B115200)
        self.maxLineBytes = maxLineBytes
        thread = TransportThread(maxLineBytes: maxLineBytes)
        self.reopenMaxS = reopenMaxS
        self.logger = logger
    }

    func start() { thread.start(name: "hr-serial") { [self] in runLoop() } }

    func stop() {
        thread.requestStop()
        thread.waitUntilFinished(seconds: 3)
    }

    func reacquire() { thread.requestReacquire() }

    private func runLoop() {
        var backoff = Backoff(minimum: 1, maximum: reopenMaxS)
        // Kept across reopens: the bytes after a reopen continue the same stream, so a line cut
        // by the reopen is completed rather than lost (if bytes were lost, the parser rejects it).
        var splitter = LineSplitter(maxBytes: maxLineBytes)
        while !shouldStop {
            let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0, configure(fd) else {
                let reason = "cannot open \(path): \(String(cString: strerror(errno)))"
                if fd >= 0 { close(fd) }
                thread.deliver(.failed(reason))
                thread.pause(seconds: backoff.nextDelay())
                continue
            }
            logger.info("serial bridge open", metadata: ["device": "\(path)"])
            thread.deliver(.ready)
            _ = thread.takeReacquireRequest()  // a request made while closed is answered by this open
            let lost = readUntilClosed(fd, splitter: &splitter)
            close(fd)
            if shouldStop { break }
            if lost {
                thread.deliver(.failed("\(path) went away"))
                thread.pause(seconds: backoff.nextDelay())
            } else {
                backoff.reset()
            }
        }
    }

    /// Raw mode: no echo, no line editing, no translation; 8N1 at the configured speed.
    private func configure(_ fd: Int32) -> Bool {
        var settings = termios()
        guard tcgetattr(fd, &settings) == 0 else { return false }
        cfmakeraw(&settings)
        cfsetispeed(&settings, speed)
        cfsetospeed(&settings, speed)
        settings.c_cflag |= tcflag_t(CLOCAL | CREAD)
        return tcsetattr(fd, TCSANOW, &settings) == 0
    }

    /// Reads lines until a reopen is asked for (false) or the device fails (true).
    private func readUntilClosed(_ fd: Int32, splitter: inout LineSplitter) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !shouldStop {
            if thread.takeReacquireRequest() { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 250)
            if ready == 0 {
                thread.idle()
                continue
            }
            if ready < 0 { if errno == EINTR { continue } else { return true } }
            if poller.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 && poller.revents & Int16(POLLIN) == 0 { return true }
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if count <= 0 { return true }
            // Waits while the heart-rate service is behind: the tty's buffer fills and the bridge blocks.
            thread.deliver(lines: splitter.feed(buffer[0..<count]))
        }
        return false
    }

}
