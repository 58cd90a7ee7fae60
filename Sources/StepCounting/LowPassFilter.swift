import Foundation

/// A second-order Butterworth low-pass (a biquad from the bilinear transform, coefficients as
/// in R. Bristow-Johnson's "Audio EQ Cookbook", Q = 1/√2). It starts settled at its first input,
/// so the gravity in an accelerometer's magnitude does not ring through as a fake step.
struct LowPassFilter: Sendable {
    private let b0, b1, b2, a1, a2: Double
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
    private var started = false

    init(cutoffHz: Double, sampleRateHz: Double) {
        let w0 = 2 * Double.pi * min(cutoffHz, sampleRateHz * 0.45) / sampleRateHz
        let alpha = sin(w0) / (2 * (1 / 2.0.squareRoot()))
        let c = cos(w0), a0 = 1 + alpha
        b0 = (1 - c) / 2 / a0
        b1 = (1 - c) / a0
        b2 = b0
        a1 = -2 * c / a0
        a2 = (1 - alpha) / a0
    }

    mutating func callAsFunction(_ x: Double) -> Double {
        if !started {
            (x1, x2, y1, y2) = (x, x, x, x)
            started = true
        }
        let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        (x2, x1, y2, y1) = (x1, x, y1, y)
        return y
    }
}
