import Foundation
import Logging
import Supervision

/// Reads gpsd on a thread of its own (libgps blocks) and reports what happens as events.
///
/// Reacquisition: with no valid fix for `fixTimeout`, the session is closed and opened again
/// (re-WATCH), after a capped, jittered backoff that grows while fixes stay away. gpsd
/// unreachable: retried forever with the same kind of backoff. A reopened session counts as
/// healthy only once a valid fix arrives.
final class GPSReader: Sendable {
    typealias State = GPSState

    enum Event: Sendable {
        case state(State)
        case fix(ValidFix, receivedAt: Date)
        /// The session was reopened after `fixTimeout` without a valid fix.
        case reacquired(count: Int, reason: String, delay: Double)
        /// 250 ms without data from gpsd (lets the consumer release a fix it holds).
        case idle(at: Date)
    }

    /// Fixes waiting for the GPS service at most: 100 s at 10 Hz. The reader never waits (gpsd
    /// drops a slow client's data); a fix that finds no room is counted (`queue_overflow`).
    static let capacity = 1000

    private let handoff = BoundedHandoff<Event>(capacity: GPSReader.capacity)
    var events: BoundedHandoff<Event>.Events { handoff.events }
    private let dropped: ReasonCounter
    private let host: String
    private let port: Int
    private let fixTimeout: Double
    private let backoffMax: Double
    private let logger: Logger
    private let clock: AgentClock
    private let thread = OwnedThread(name: "gps-reader")

    init(host: String, port: Int, fixTimeout: Double, backoffMax: Double, clock: AgentClock, dropped: ReasonCounter, logger: Logger) {
        self.dropped = dropped
        self.host = host
        self.port = port
        self.fixTimeout = fixTimeout
        self.backoffMax = backoffMax
        self.clock = clock
        self.logger = logger
    }

    func start() {
        thread.start { [self] in
            readLoop()
            handoff.finish()
        }
    }

    func stop() {
        thread.requestStop()
        thread.join(timeout: 3)
    }

    private var isStopRequested: Bool { thread.shouldStop }

    private func readLoop() {
        var connectBackoff = Backoff(minimum: 1, maximum: backoffMax)
        var reacquireBackoff = Backoff(minimum: 1, maximum: backoffMax)
        var reacquisitions = 0
        var reacquiring = false
        while !isStopRequested {
            let session: GPSDSession
            do {
                session = try GPSDSession(host: host, port: port)
            } catch {
                handoff.force(.state(.disconnected))
                let delay = connectBackoff.nextDelay()
                logger.warning("gpsd unreachable", metadata: ["gpsd": "\(host):\(port)", "error": "\(error)", "retry_in_s": "\(Self.format(delay))"])
                pause(seconds: delay)
                continue
            }
            connectBackoff.reset()
            logger.info("gpsd session open", metadata: ["gpsd": "\(host):\(port)"])
            handoff.force(.state(reacquiring ? .reacquiring : .acquiring))
            var lastValid = DispatchTime.now()
            var fixed = false
            var pauseBeforeReopening = 0.0
            while !isStopRequested {
                if !session.waitForData(timeoutMs: 250) {
                    _ = handoff.offer([.idle(at: clock.systemNow())])
                } else {
                    let report: GPSDSession.Report
                    do {
                        report = try session.read()
                    } catch {
                        logger.warning("gpsd session lost", metadata: ["error": "\(error)"])
                        handoff.force(.state(.disconnected))
                        reacquiring = false
                        pauseBeforeReopening = connectBackoff.nextDelay()
                        break
                    }
                    if case .position(let raw) = report {
                        switch FixValidation.validate(raw) {
                        case .success(let fix):
                            lastValid = DispatchTime.now()
                            reacquireBackoff.reset()
                            reacquiring = false
                            // The fix first: the status that says "fixed" then has its age.
                            if !handoff.offer([.fix(fix, receivedAt: clock.systemNow())]) {
                                dropped.count(IngestCounters.GPSDrop.queueOverflow, detail: "\(GPSReader.capacity) fixes wait for the GPS service")
                            }
                            if !fixed {
                                fixed = true
                                handoff.force(.state(.fixed))
                            }
                        case .failure(.noFix):
                            break  // nothing was measured
                        case .failure(let rejection):
                            dropped.count(IngestCounters.GPSDrop.rejectedFix, detail: rejection.rawValue)
                        }
                    }
                }
                let silent = secondsSince(uptimeNanoseconds: lastValid.uptimeNanoseconds)
                if silent >= fixTimeout {
                    reacquisitions += 1
                    reacquiring = true
                    let delay = reacquireBackoff.nextDelay()
                    let reason = "no valid fix for \(Self.format(silent)) s"
                    logger.notice("reacquiring GPS", metadata: ["reason": "\(reason)", "count": "\(reacquisitions)", "reopen_in_s": "\(Self.format(delay))"])
                    handoff.force(.reacquired(count: reacquisitions, reason: reason, delay: delay))
                    handoff.force(.state(.reacquiring))
                    pauseBeforeReopening = delay
                    break
                }
            }
            session.close()
            pause(seconds: pauseBeforeReopening)
        }
    }

    /// Waits, reporting `.idle` every second: the thread is alive (watchdog) even when waiting.
    private func pause(seconds: Double) {
        thread.pause(seconds: seconds) { _ = handoff.offer([.idle(at: clock.systemNow())]) }
    }

    private static func format(_ seconds: Double) -> String { String(format: "%.1f", seconds) }
}
