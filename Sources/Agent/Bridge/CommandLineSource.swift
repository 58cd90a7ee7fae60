import CSpawn
import Foundation
import Logging
import Supervision
import Synchronization

/// Bridge messages from a child process's stdout (`[hr] transport = "command"`). The child runs
/// in its own process group and dies with the agent (PR_SET_PDEATHSIG, also on SIGKILL of the
/// agent); `reacquire()` kills the group and starts the child again. A child that exits is
/// restarted after a capped backoff.
final class CommandLineSource: BridgeTransport, Sendable {
    let name = "command"
    private let thread: TransportThread
    var events: HeartRateTransportEvents { thread.events }
    private var shouldStop: Bool { thread.shouldStop }
    private let argv: [String]
    private let maxLineBytes: Int
    private let restartMaxS: Double
    private let logger: Logger
    /// The running child's pid (its process group), 0 when none: `stop` and `reacquire` signal it.
    private let child = Mutex<pid_t>(0)

    init(argv: [String], maxLineBytes: Int, restartMaxS: Double, logger: Logger) {
        self.argv = argv
        self.maxLineBytes = maxLineBytes
        thread = TransportThread(maxLineBytes: maxLineBytes)
        self.restartMaxS = restartMaxS
        self.logger = logger
    }

    func start() { thread.start(name: "hr-command") { [self] in runLoop() } }

    func stop() {
        thread.requestStop()
        let pid = child.withLock { $0 }
        if pid > 0 { kill(-pid, SIGTERM) }
        thread.waitUntilFinished(seconds: 5)
    }

    func reacquire() {
        thread.requestReacquire()
        let pid = child.withLock { $0 }
        if pid > 0 { kill(-pid, SIGTERM) }
    }

    private func runLoop() {
        var backoff = Backoff(minimum: 1, maximum: restartMaxS)
        while !shouldStop {
            var fds: [Int32] = [0, 0]
            // Close-on-exec, so later children (a restart) do not inherit this pipe.
            guard pipe(&fds) == 0, fcntl(fds[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(fds[1], F_SETFD, FD_CLOEXEC) == 0 else {
                thread.deliver(.failed("pipe: \(String(cString: strerror(errno)))"))
                thread.pause(seconds: backoff.nextDelay())
                continue
            }
            let arguments = argv.map { strdup($0) } + [nil]
            let pid = keepalive_spawn(arguments, fds[1])
            let spawnError = errno
            arguments.forEach { free($0) }
            close(fds[1])
            guard pid > 0 else {
                close(fds[0])
                thread.deliver(.failed("cannot start \(argv[0]): \(String(cString: strerror(spawnError)))"))
                thread.pause(seconds: backoff.nextDelay())
                continue
            }
            child.withLock { $0 = pid }
            _ = thread.takeReacquireRequest()  // this start answers any earlier request
            logger.info("heart-rate bridge started", metadata: ["pid": "\(pid)", "command": "\(argv.joined(separator: " "))"])
            thread.deliver(.ready)
            let sawData = readUntilEnd(fds[0])
            close(fds[0])
            stopChild(pid)
            let restarting = thread.takeReacquireRequest()
            if shouldStop { break }
            if sawData || restarting { backoff.reset() }
            let delay = restarting ? 0 : backoff.nextDelay()
            if !restarting {
                logger.warning("heart-rate bridge exited; restarting", metadata: ["in_s": "\(String(format: "%.1f", delay))"])
                thread.deliver(.failed("bridge program exited"))
            }
            thread.pause(seconds: delay)
        }
    }

    /// Reads lines until EOF (the child exited or was killed); true if anything arrived.
    private func readUntilEnd(_ fd: Int32) -> Bool {
        var splitter = LineSplitter(maxBytes: maxLineBytes)
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var sawData = false
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 250)
            if ready == 0 {
                thread.idle()
                if shouldStop { return sawData }
                continue
            }
            if ready < 0 && errno == EINTR { continue }
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { return sawData }
            sawData = true
            // Waits while the heart-rate service is behind: the pipe fills and the child blocks.
            thread.deliver(lines: splitter.feed(buffer[0..<count]))
        }
    }

    /// SIGTERM to the child's group, SIGKILL after 2 s, then reap it: no zombies, no orphans.
    private func stopChild(_ pid: pid_t) {
        kill(-pid, SIGTERM)
        var status: Int32 = 0
        let deadline = ContinuousClock.now + .seconds(2)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now > deadline {
                kill(-pid, SIGKILL)
                waitpid(pid, &status, 0)
                break
            }
            usleep(20_000)
        }
        child.withLock { $0 = 0 }
    }

}
