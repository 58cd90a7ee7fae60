import Foundation
import Store

/// A workout's track with the receiver's noise taken out and its corners kept: a Kalman filter
/// with a constant-velocity model (Kalman 1960, *J Basic Eng* 82:35), run forward over the fixes
/// and back by the Rauch–Tung–Striebel smoother (Rauch, Tung & Striebel 1965, *AIAA J* 3:1445), so
/// each position is estimated from the fixes before **and** after it. Unlike a moving average it
/// does not lag behind a turn, and unlike anchoring every 10 m it does not cut one.
///
/// - State per axis (east, north, metres from the first fix): position and velocity; white
///   acceleration noise of `accelerationNoise` m²/s³ (a walker's or runner's changes of pace and
///   direction; the discrete form of Bar-Shalom, Li & Kirubarajan 2001, *Estimation with
///   Applications to Tracking and Navigation*, §6.2).
/// - Each fix measures the position with σ = eph / 2.45 per axis (gpsd's `eph` is a 95 % radius;
///   `unknownErrorM` when it gives none) and, where the receiver reports speed and course, the
///   velocity (Doppler, σ `velocityErrorMps`).
/// - A position more than 3 σ of its innovation away from the prediction is left out (the
///   validation gate of the same book, §3.4.2): a multipath jump does not pull the track. No
///   limit on how many in a row: while positions are left out the predicted spread grows, so a
///   track that really moved is taken up again by itself (forcing one in after 5 was measured
///   worse: it pulled a real walk 8 % long).
struct TrackSmoother {
    static let accelerationNoise = 0.3
    static let velocityErrorMps = 0.5
    static let unknownErrorM = 10.0
    static let gate = 9.0  // 3 σ, squared

    struct Point: Sendable, Equatable {
        var timeMs: Int64
        /// Metres east and north of the first fix.
        var east: Double
        var north: Double
        var speedMps: Double
    }

    /// The smoothed track, one point per fix (same order: by time).
    static func smooth(_ fixes: [StoredFix]) -> [Point] {
        guard let first = fixes.first else { return [] }
        let metresPerDegreeLat = 111_320.0
        let metresPerDegreeLon = metresPerDegreeLat * cos(first.lat * .pi / 180)
        let times = fixes.map { Double($0.timeMs - first.timeMs) / 1000 }
        let variances = fixes.map { fix -> Double in
            let sigma = (fix.eph.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? unknownErrorM * 2.45) / 2.45
            return sigma * sigma
        }
        let velocities = fixes.map { fix -> (east: Double, north: Double)? in
            guard let speed = fix.speed, let track = fix.track, speed.isFinite, track.isFinite else { return nil }
            let radians = track * .pi / 180
            return (speed * sin(radians), speed * cos(radians))
        }
        let east = Axis.smooth(
            times: times, positions: fixes.map { ($0.lon - first.lon) * metresPerDegreeLon }, variances: variances,
            velocities: velocities.map { $0?.east })
        let north = Axis.smooth(
            times: times, positions: fixes.map { ($0.lat - first.lat) * metresPerDegreeLat }, variances: variances,
            velocities: velocities.map { $0?.north })
        return fixes.indices.map { index in
            Point(
                timeMs: fixes[index].timeMs, east: east[index].position, north: north[index].position,
                speedMps: (east[index].velocity * east[index].velocity + north[index].velocity * north[index].velocity).squareRoot())
        }
    }

    /// One axis: a 2-state filter (position, velocity) and its RTS pass.
    private enum Axis {
        struct State {
            var position: Double
            var velocity: Double
        }

        /// A symmetric 2×2 covariance.
        struct Covariance {
            var pp: Double
            var pv: Double
            var vv: Double
        }

        static func smooth(times: [Double], positions: [Double], variances: [Double], velocities: [Double?]) -> [State] {
            let count = positions.count
            var filtered: [State] = []
            var filteredCovariance: [Covariance] = []
            var predicted: [State] = []
            var predictedCovariance: [Covariance] = []
            filtered.reserveCapacity(count)
            var state = State(position: positions[0], velocity: 0)
            var covariance = Covariance(pp: variances[0], pv: 0, vv: 4)
            for index in 0..<count {
                if index > 0 {
                    let dt = max(0, times[index] - times[index - 1])
                    let q = accelerationNoise
                    state = State(position: state.position + dt * state.velocity, velocity: state.velocity)
                    covariance = Covariance(
                        pp: covariance.pp + 2 * dt * covariance.pv + dt * dt * covariance.vv + q * dt * dt * dt / 3,
                        pv: covariance.pv + dt * covariance.vv + q * dt * dt / 2,
                        vv: covariance.vv + q * dt)
                }
                predicted.append(state)
                predictedCovariance.append(covariance)
                // Position.
                let innovation = positions[index] - state.position
                let spread = covariance.pp + variances[index]
                if index == 0 || innovation * innovation / spread <= gate {
                    let gainP = covariance.pp / spread, gainV = covariance.pv / spread
                    state = State(position: state.position + gainP * innovation, velocity: state.velocity + gainV * innovation)
                    covariance = Covariance(
                        pp: (1 - gainP) * covariance.pp, pv: (1 - gainP) * covariance.pv, vv: covariance.vv - gainV * covariance.pv)
                }
                // Velocity (Doppler), where reported.
                if let velocity = velocities[index] {
                    let spread = covariance.vv + velocityErrorMps * velocityErrorMps
                    let innovation = velocity - state.velocity
                    let gainP = covariance.pv / spread, gainV = covariance.vv / spread
                    state = State(position: state.position + gainP * innovation, velocity: state.velocity + gainV * innovation)
                    covariance = Covariance(
                        pp: covariance.pp - gainP * covariance.pv, pv: (1 - gainV) * covariance.pv, vv: (1 - gainV) * covariance.vv)
                }
                filtered.append(state)
                filteredCovariance.append(covariance)
            }
            // Rauch–Tung–Striebel: x̂ₖ += Cₖ (x̂ₖ₊₁ − x̄ₖ₊₁), Cₖ = Pₖ Fᵀ P̄ₖ₊₁⁻¹.
            var smoothed = filtered
            guard count > 1 else { return smoothed }
            for index in stride(from: count - 2, through: 0, by: -1) {
                let dt = max(0, times[index + 1] - times[index])
                let p = filteredCovariance[index], next = predictedCovariance[index + 1]
                let determinant = next.pp * next.vv - next.pv * next.pv
                guard determinant > 0, determinant.isFinite else { continue }
                // P Fᵀ, with F = [[1, dt], [0, 1]].
                let a = p.pp + dt * p.pv, b = p.pv
                let c = p.pv + dt * p.vv, d = p.vv
                let inverse = (pp: next.vv / determinant, pv: -next.pv / determinant, vv: next.pp / determinant)
                let gain = (
                    pp: a * inverse.pp + b * inverse.pv, pv: a * inverse.pv + b * inverse.vv,
                    vp: c * inverse.pp + d * inverse.pv, vv: c * inverse.pv + d * inverse.vv)
                let dp = smoothed[index + 1].position - predicted[index + 1].position
                let dv = smoothed[index + 1].velocity - predicted[index + 1].velocity
                smoothed[index].position += gain.pp * dp + gain.pv * dv
                smoothed[index].velocity += gain.vp * dp + gain.vv * dv
            }
            return smoothed
        }
    }
}
