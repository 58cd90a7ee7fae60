import CFFTW
import Synchronization

/// The forward DFT of a real signal of one fixed length, by FFTW (sleepecg's spectra are 2040
/// points long): `X[k] = Σ x[j]·exp(−2πi·jk/N)` for k = 0…N/2, as numpy's `rfft`.
///
/// The plan is made once per length (`FFTW_ESTIMATE`: no timing runs, so the same algorithm and
/// the same rounding on every run and machine) and reused for every window; FFTW's planner is
/// not thread-safe but executing a plan on new arrays is, so only the planning is locked.
/// `FFTW_UNALIGNED` lets any buffer be passed to the plan.
struct RealFFT: Sendable {
    let count: Int
    private let plan: SharedPlan

    init(count: Int) {
        precondition(count > 0)
        self.count = count
        plan = SharedPlan.forLength(count)
    }

    /// The first `count/2 + 1` bins of the transform of `signal` zero-padded (or cut) to `count` points.
    func transform(real signal: [Double]) -> (re: [Double], im: [Double]) {
        let bins = count / 2 + 1
        let input = fftw_alloc_real(count)
        let output = fftw_alloc_complex(bins)
        defer {
            fftw_free(input)
            fftw_free(output)
        }
        guard let input, let output else { fatalError("FFTW could not allocate \(count) points") }
        let used = min(count, signal.count)
        for index in 0..<used { input[index] = signal[index] }
        for index in used..<count { input[index] = 0 }
        fftw_execute_dft_r2c(plan.pointer, input, output)
        var re = [Double](repeating: 0, count: bins)
        var im = [Double](repeating: 0, count: bins)
        for k in 0..<bins {
            re[k] = output[k].0
            im[k] = output[k].1
        }
        return (re, im)
    }

    /// A plan for one length, never destroyed (a handful of lengths per process at most).
    /// Unchecked `Sendable`, and safe: FFTW documents `fftw_execute_dft_r2c` on a shared plan as thread-safe.
    final class SharedPlan: @unchecked Sendable {
        let pointer: OpaquePointer

        private init(pointer: OpaquePointer) { self.pointer = pointer }

        private static let plans = Mutex<[Int: SharedPlan]>([:])

        static func forLength(_ count: Int) -> SharedPlan {
            Self.plans.withLock { plans in
                if let plan = plans[count] { return plan }
                let input = fftw_alloc_real(count)
                let output = fftw_alloc_complex(count / 2 + 1)
                defer {
                    fftw_free(input)
                    fftw_free(output)
                }
                guard let made = fftw_plan_dft_r2c_1d(Int32(count), input, output, FFTW_ESTIMATE | FFTW_UNALIGNED) else {
                    fatalError("FFTW made no plan for \(count) points")
                }
                let plan = SharedPlan(pointer: made)
                plans[count] = plan
                return plan
            }
        }
    }
}
