import CSpawn
import Foundation
import Synchronization

/// Starts test children from one thread that lives as long as the test process.
///
/// Children get PR_SET_PDEATHSIG (SIGKILL), which Linux fires when the thread that forked them
/// ends — not the process. Forking from this thread ties every broker, gpsfake and agent a test
/// starts to the test run itself: killed (a CI timeout, Ctrl-C, a crash), it takes them along
/// instead of leaving them holding ports.
public final class Spawner: Sendable {
    public static let shared = Spawner()

    private struct Request {
        var path: String
        var argv: [String]
        var envp: [String]
        var outputFD: Int32
        var done: @Sendable (_ pid: pid_t, _ error: Int32) -> Void
    }

    private let requests = Mutex<[Request]>([])
    /// Signalled once per request appended: the spawner thread waits on it.
    private let waiting = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "test-spawner"
        thread.start()
    }

    /// Starts `path` (stdin /dev/null, stdout and stderr on `outputFD`) and returns its pid;
    /// waits for the fork, throws when the program cannot be started.
    public func spawn(path: String, argv: [String], envp: [String], outputFD: Int32) throws -> pid_t {
        let finished = DispatchSemaphore(value: 0)
        let result = SpawnResult()
        let request = Request(path: path, argv: argv, envp: envp, outputFD: outputFD) { pid, error in
            result.outcome.withLock { $0 = (pid, error) }
            finished.signal()
        }
        requests.withLock { $0.append(request) }
        waiting.signal()
        finished.wait()
        let (pid, error) = result.outcome.withLock { $0 }
        guard pid > 0 else { throw WaitTimeout(description: "cannot start \(path): \(String(cString: strerror(error)))") }
        return pid
    }

    private func serve() {
        while true {
            waiting.wait()
            let request = requests.withLock { $0.removeFirst() }
            let argv = request.argv.map { strdup($0) } + [nil]
            let envp = request.envp.map { strdup($0) } + [nil]
            let pid = keepalive_spawn_tied(request.path, argv, envp, request.outputFD)
            let error = errno
            argv.forEach { free($0) }
            envp.forEach { free($0) }
            request.done(pid, error)
        }
    }
}

/// Handed from the spawner thread to the waiting caller.
private final class SpawnResult: Sendable {
    let outcome = Mutex<(pid: pid_t, error: Int32)>((-1, EINVAL))
}
