import Foundation

/// sleepecg's seven frequency-domain HRV features (`_hrv_frequencydomain_features`, group
/// `hrv-frequency`): the RR series linearly interpolated (scipy `interp1d`, which is `np.interp`
/// here, NaN outside the beats) onto a 4 Hz grid from the first epoch − lookback to the last epoch +
/// lookforward, cut into one 510-s window per epoch (2040 samples, 30 s apart), a periodogram per
/// window, and the power integrated (trapezoid) over the Task Force bands.
///
/// `_nanpsd` with the classifier's `max_nans` = 0.5: a window without NaN gets scipy's
/// `periodogram(x, fs)` (boxcar, mean removed, density scaling, one-sided); a window with at most
/// half NaN gets `periodogram` of its non-NaN samples *spliced together*, with a periodic Hann
/// window, zero-padded to 2040 points; any other window has no spectrum (NaN features).
enum FrequencyDomainFeatures {
    static let names = ["total_power", "VLF", "LF", "LF_norm", "HF", "HF_norm", "LF_HF_ratio"]
    static let samplingHz = 4.0

    /// The RR series on sleepecg's 4 Hz grid, `np.arange(-lookback, (epochs-1)*30 + lookforward, 0.25)`
    /// seconds from the recording start (every point exact): epoch e's window is the 2040 samples
    /// from `e · 120`.
    /// - Parameters:
    ///   - nn: the cleaned RR intervals, seconds (NaN outside the limits or unknown).
    ///   - times: their end times, seconds since the recording start, increasing.
    ///   - epochs: how many epochs (their starts are 0, 30, 60, … s).
    /// `only`: just the part of the grid the windows of those epochs cover, the same values (a
    /// night classified again computes a few epochs, not the whole night's grid: issue 32); its
    /// first value is that of the first epoch's window (`EpochSpectrum.features(…, firstEpoch:)`).
    static func resample(
        nn: [Double], times: [Double], epochs: Int, lookback: Int, lookforward: Int, only: ClosedRange<Int>? = nil
    ) -> [Double] {
        guard epochs > 0 else { return [] }
        let gridStart = Double(-lookback)
        let gridStop = Double((epochs - 1) * SleepEpoch.seconds + lookforward)
        let gridCount = Int(((gridStop - gridStart) * samplingHz).rounded(.up))
        let delta = (gridStart + 1 / samplingHz) - gridStart
        let step = Int(samplingHz * Double(SleepEpoch.seconds))
        let length = Int(Double(lookback + lookforward) * samplingHz)
        let points = only.map { min($0.lowerBound * step, gridCount)..<min($0.upperBound * step + length, gridCount) } ?? 0..<gridCount
        // The grid's points as they are read: an array of them was as large as the series.
        return interpolate(points.lazy.map { gridStart + Double($0) * delta }, times, nn)
    }

    /// The seven features of one epoch from its window of the resampled series (`resample`).
    struct EpochSpectrum: Sendable {
        let windowLength: Int
        let windowStep: Int
        let maxNaNFraction: Double
        let fft: RealFFT
        let bands: Bands

        init(lookback: Int, lookforward: Int, maxNaNFraction: Double) {
            windowLength = Int(Double(lookback + lookforward) * samplingHz)
            windowStep = Int(samplingHz * Double(SleepEpoch.seconds))
            self.maxNaNFraction = maxNaNFraction
            fft = RealFFT(count: windowLength)
            bands = Bands(fftLength: windowLength, samplingHz: samplingHz)
        }

        /// `firstEpoch`: the epoch `resampled` starts at (`resample(…, only:)`).
        func features(epoch: Int, resampled: [Double], firstEpoch: Int = 0) -> [Double] {
            let start = (epoch - firstEpoch) * windowStep
            let window = resampled[start..<(start + windowLength)]
            let valid = window.filter { !$0.isNaN }
            let nanFraction = Double(window.count - valid.count) / Double(window.count)
            let psd: [Double]?
            if valid.count == window.count {
                psd = periodogram(valid, fft: fft, bins: bands.binCount, hann: false)
            } else if !valid.isEmpty && nanFraction <= maxNaNFraction {
                psd = periodogram(valid, fft: fft, bins: bands.binCount, hann: true)
            } else {
                psd = nil
            }
            return psd.map { bands.features($0) } ?? Array(repeating: .nan, count: names.count)
        }
    }

    /// `np.interp(x, xp, fp)` (with its exact-hit and NaN rules), NaN outside `[xp₀, xp_last]` as
    /// `interp1d(bounds_error=False)` fills it.
    static func interpolate<Points: Collection<Double>>(_ x: Points, _ xp: [Double], _ fp: [Double]) -> [Double] {
        guard let first = xp.first, let last = xp.last, xp.count >= 2 else {
            return Array(repeating: .nan, count: x.count)
        }
        var result = [Double](repeating: .nan, count: x.count)
        var j = 0
        for (index, value) in x.enumerated() {
            if value < first || value > last || value.isNaN { continue }
            // x is increasing: walk j so that xp[j] <= value < xp[j+1].
            while j + 1 < xp.count && xp[j + 1] <= value { j += 1 }
            if j == xp.count - 1 || xp[j] == value {
                result[index] = fp[j]
                continue
            }
            let slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
            var y = slope * (value - xp[j]) + fp[j]
            if y.isNaN {
                y = slope * (value - xp[j + 1]) + fp[j + 1]
                if y.isNaN && fp[j] == fp[j + 1] { y = fp[j] }
            }
            result[index] = y
        }
        return result
    }

    /// scipy's `periodogram(x, fs, window)` with density scaling, one-sided, mean removed, the FFT
    /// as long as the spectrum's window (longer than `x` when NaNs were dropped): the first `bins`
    /// bins, V²/Hz.
    static func periodogram(_ x: [Double], fft: RealFFT, bins: Int, hann: Bool) -> [Double] {
        let mean = NumpyReductions.sum(x) / Double(x.count)
        var window = [Double](repeating: 1, count: x.count)
        if hann { window = periodicHann(x.count) }
        let scale = 1 / (samplingHz * NumpyReductions.sum(window.map { $0 * $0 }))
        let tapered = zip(x, window).map { ($0 - mean) * $1 }
        let (re, im) = fft.transform(real: tapered)
        return (0..<bins).map { k in
            let power = (re[k] * re[k] + im[k] * im[k]) * scale
            // One-sided: every bin but DC (and Nyquist, never among these bins) counts twice.
            return k == 0 || k == fft.count / 2 ? power : 2 * power
        }
    }

    /// scipy's `get_window("hann", n)` (periodic): `0.5 + 0.5·cos(linspace(−π, π, n+1))`, last dropped.
    static func periodicHann(_ n: Int) -> [Double] {
        let step = (Double.pi - -Double.pi) / Double(n)
        return (0..<n).map { 0.5 + 0.5 * cos(Double($0) * step + -Double.pi) }
    }

    /// The bands on the FFT's frequency grid (`rfftfreq`: k · 1/(N·T)), as sleepecg's masks pick them.
    struct Bands {
        let frequencies: [Double]
        let total: [Int]
        let vlf: [Int]
        let lf: [Int]
        let hf: [Int]
        var binCount: Int { frequencies.count }

        init(fftLength: Int, samplingHz: Double) {
            let binWidth = 1.0 / (Double(fftLength) * (1 / samplingHz))
            var frequencies: [Double] = []
            var k = 0
            while Double(k) * binWidth <= 0.4 {
                frequencies.append(Double(k) * binWidth)
                k += 1
            }
            self.frequencies = frequencies
            let indices = Array(frequencies.indices)
            total = indices.filter { frequencies[$0] <= 0.4 }
            vlf = indices.filter { 0.0033 < frequencies[$0] && frequencies[$0] <= 0.04 }
            lf = indices.filter { 0.04 < frequencies[$0] && frequencies[$0] <= 0.15 }
            hf = indices.filter { 0.15 < frequencies[$0] && frequencies[$0] <= 0.4 }
        }

        func features(_ psd: [Double]) -> [Double] {
            let totalPower = trapezoid(psd, total)
            let vlfPower = trapezoid(psd, vlf)
            let lfPower = trapezoid(psd, lf)
            let hfPower = trapezoid(psd, hf)
            return [
                totalPower, vlfPower, lfPower, lfPower / (lfPower + hfPower) * 100, hfPower,
                hfPower / (lfPower + hfPower) * 100, lfPower / hfPower,
            ]
        }

        /// `scipy.integrate.trapezoid(psd[mask], f[mask])`.
        private func trapezoid(_ psd: [Double], _ bins: [Int]) -> Double {
            guard bins.count >= 2 else { return 0 }
            let terms = (0..<(bins.count - 1)).map { index -> Double in
                let (left, right) = (bins[index], bins[index + 1])
                let width: Double = frequencies[right] - frequencies[left]
                let height: Double = psd[right] + psd[left]
                return width * height / 2.0
            }
            return NumpyReductions.sum(terms)
        }
    }
}
