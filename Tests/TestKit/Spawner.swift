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

    public enum Outcome: Sendable {
        case success(pid_t)
        case failure(Int32)
    }

    private struct Request {
        var path: String
        var argv: [String]
        var envp: [String]
        var outputFD: Int32
        var done: (Outcome) -> Void
    }

    private let condition = NSCondition()
    private var requests: [Request] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "test-spawner"
        thread.start()
    }

    /// Starts `path` (stdin /dev/null, stdout and stderr on `outputFD`); waits for the fork.
    public func spawn(path: String, argv: [String], envp: [String], outputFD: Int32) -> Outcome {
        let finished = DispatchSemaphore(value: 0)
        let result = OutcomeBox()
        condition.lock()
        requests.append(Request(path: path, argv: argv, envp: envp, outputFD: outputFD) { outcome in
            result.value = outcome
            finished.signal()
        })
        condition.signal()
        condition.unlock()
        finished.wait()
        return result.value
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
            request.done(pid > 0 ? .success(pid) : .failure(error))
        }
    }
}

private final class OutcomeBox: @unchecked Sendable {
    var value: Spawner.Outcome = .failure(EINVAL)
}
