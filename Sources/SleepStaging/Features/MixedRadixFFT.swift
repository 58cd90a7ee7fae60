import Foundation

/// A complex discrete Fourier transform of one fixed length whose prime factors are small
/// (sleepecg's spectra are 2040 = 2³·3·5·17 points long): recursive decimation in time, one
/// p-point DFT per factor, twiddles from one table. Cost N·Σp; precision that of any FFT in double.
struct MixedRadixFFT: Sendable {
    let count: Int
    private let factors: [Int]
    private let cosines: [Double]
    private let sines: [Double]

    init(count: Int) {
        precondition(count > 0)
        self.count = count
        var factors: [Int] = []
        var rest = count
        var divisor = 2
        while rest > 1 {
            while rest % divisor == 0 {
                factors.append(divisor)
                rest /= divisor
            }
            divisor += 1
        }
        self.factors = factors
        cosines = (0..<count).map { cos(2 * Double.pi * Double($0) / Double(count)) }
        sines = (0..<count).map { -sin(2 * Double.pi * Double($0) / Double(count)) }
    }

    /// `X[k] = Σ x[j]·exp(−2πi·jk/N)` of a real signal zero-padded (or cut) to `count` points.
    func transform(real signal: [Double]) -> (re: [Double], im: [Double]) {
        var input = [Double](repeating: 0, count: count)
        for index in 0..<min(count, signal.count) { input[index] = signal[index] }
        var outRe = [Double](repeating: 0, count: count)
        var outIm = [Double](repeating: 0, count: count)
        var scratchRe = [Double](repeating: 0, count: factors.max() ?? 1)
        var scratchIm = scratchRe
        input.withUnsafeBufferPointer { real in
            outRe.withUnsafeMutableBufferPointer { oRe in
                outIm.withUnsafeMutableBufferPointer { oIm in
                    scratchRe.withUnsafeMutableBufferPointer { sRe in
                        scratchIm.withUnsafeMutableBufferPointer { sIm in
                            step(real, offset: 0, stride: 1, length: count, factor: 0, oRe, oIm, at: 0, sRe, sIm)
                        }
                    }
                }
            }
        }
        return (outRe, outIm)
    }

    /// Transforms `length` inputs taken every `stride` from `offset` into outputs `at…at+length`.
    private func step(
        _ input: UnsafeBufferPointer<Double>, offset: Int, stride: Int, length: Int, factor: Int,
        _ outRe: UnsafeMutableBufferPointer<Double>, _ outIm: UnsafeMutableBufferPointer<Double>, at: Int,
        _ tRe: UnsafeMutableBufferPointer<Double>, _ tIm: UnsafeMutableBufferPointer<Double>
    ) {
        if length == 1 {
            outRe[at] = input[offset]
            outIm[at] = 0
            return
        }
        let p = factors[factor]
        let m = length / p
        for q in 0..<p {
            step(input, offset: offset + q * stride, stride: stride * p, length: m, factor: factor + 1,
                 outRe, outIm, at: at + q * m, tRe, tIm)
        }
        // Combine the p sub-transforms: X[k + s·m] = Σ_q (W_n^{qk}·Y_q[k])·W_p^{qs}.
        let twiddleStep = count / length
        let rootStep = count / p
        for k in 0..<m {
            for q in 0..<p {
                let re = outRe[at + q * m + k]
                let im = outIm[at + q * m + k]
                let w = q * k * twiddleStep
                tRe[q] = re * cosines[w] - im * sines[w]
                tIm[q] = re * sines[w] + im * cosines[w]
            }
            for s in 0..<p {
                var sumRe = 0.0
                var sumIm = 0.0
                for q in 0..<p {
                    let w = (q * s * rootStep) % count
                    sumRe += tRe[q] * cosines[w] - tIm[q] * sines[w]
                    sumIm += tRe[q] * sines[w] + tIm[q] * cosines[w]
                }
                outRe[at + k + s * m] = sumRe
                outIm[at + k + s * m] = sumIm
            }
        }
    }
}
