/// Follows one sensor's CSC Measurements and turns each into `CSCRevolutions` against that
/// sensor's last wheel data and last crank data, kept apart: a combined sensor that sends wheel
/// and crank data in alternate notifications, or a cadence sensor that sends a stale wheel
/// block, still counts each channel against its own previous value (compared whole-measurement
/// to whole-measurement, every span of an alternating sensor would be `.absent`).
///
/// A repeat (`.unchanged`) leaves the base and its receive time alone: after a long stop the
/// next revolution is measured from the last real one, so a stop of over 64 s, which the
/// 16-bit event times cannot span, comes out `.untimed` rather than as a wrong rate.
public struct CSCFollower: Sendable {
    private struct Last<Data: Sendable>: Sendable {
        var data: Data
        var receivedSeconds: Double
    }

    private var wheel: Last<CSCMeasurement.Wheel>?
    private var crank: Last<CSCMeasurement.Crank>?

    public init() {}

    /// What `measurement`, received at `receivedSeconds` on the caller's monotonic clock, adds
    /// to what came before; a channel first seen is `.absent` (nothing to compare with).
    public mutating func add(_ measurement: CSCMeasurement, receivedSeconds: Double) -> CSCRevolutions {
        var result = CSCRevolutions(wheel: .absent, crank: .absent)
        if let current = measurement.wheel {
            if let last = wheel {
                result.wheel = CSCRevolutions.wheel(
                    from: last.data, to: current, secondsApart: receivedSeconds - last.receivedSeconds)
            }
            if result.wheel != .unchanged { wheel = Last(data: current, receivedSeconds: receivedSeconds) }
        }
        if let current = measurement.crank {
            if let last = crank {
                result.crank = CSCRevolutions.crank(
                    from: last.data, to: current, secondsApart: receivedSeconds - last.receivedSeconds)
            }
            if result.crank != .unchanged { crank = Last(data: current, receivedSeconds: receivedSeconds) }
        }
        return result
    }
}
