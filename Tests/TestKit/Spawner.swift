import CSpawn
import Foundation

/// Starts test children from one thread that lives as long as the test process.
///
/// Children get PR_SET_PDEATHSIG (SIGKILL), which Linux fires when the thread that forked them
/// ends — not the process. Forking from this thread ties every broker, gpsfake and agent a test
/// starts to the test run itself: killed (a CI timeout, Ctrl-C, a crash), it takes them along
/// instead of leaving them holding ports.
public final class Spawner: @unchecked Sendable {
    public static let shared = Spawner()

    private struct Request {
        var path: String
        var argv: [String]
        var envp: [String]
        var outputFD: Int32
        var done: (_ pid: pid_t, _ error: Int32) -> Void
    }

    private let condition = NSCondition()
    private var requests: [Request] = []

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
        condition.lock()
        requests.append(Request(path: path, argv: argv, envp: envp, outputFD: outputFD) { pid, error in
            (result.pid, result.error) = (pid, error)
            finished.signal()
        })
        condition.signal()
        condition.unlock()
        finished.wait()
        guard result.pid > 0 else { throw WaitTimeout(description: "cannot start \(path): \(String(cString: strerror(result.error)))") }
        return result.pid
    }

    private func serve() {
        while true {
            condition.lock()
            while requests.isEmpty { condition.wait() }
            let request = requests.removeFirst()
            condition.unlock()
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

/// Handed from the spawner thread to the waiting caller (the semaphore orders the accesses).
private final class SpawnResult: @unchecked Sendable {
    var pid: pid_t = -1
    var error: Int32 = EINVAL
}
