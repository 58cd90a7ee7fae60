import Foundation

/// sleepecg's 26 time-domain HRV features (`_hrv_timedomain_features`, group `hrv-time`), per
/// epoch, over the RR intervals that ended in `[epoch − lookback, epoch + lookforward)`.
///
/// As in sleepecg, each epoch's window is a row of one NaN-padded array as wide as the longest
/// window of the recording. That width matters: pNN50 and pNN20 are `nanmean` of a boolean array,
/// which has no NaN, so they are counts divided by (widest window − 1), not by the epoch's own
/// number of differences — a recording-wide quirk reproduced here, not corrected.
enum TimeDomainFeatures {
    static let names = [
        "meanNN", "maxNN", "minNN", "rangeNN", "SDNN", "RMSSD", "SDSD", "NN50", "NN20", "pNN50", "pNN20",
        "medianNN", "madNN", "iqrNN", "cvNN", "cvSD", "meanHR", "maxHR", "minHR", "stdHR", "SD1", "SD2", "S",
        "SD1_SD2_ratio", "CSI", "CVI",
    ]

    static let pnn50Index = 9
    static let pnn20Index = 10

    /// - Parameters:
    ///   - windows: per epoch, the index range of `nn` in its window.
    ///   - nn: the cleaned RR intervals, seconds (NaN outside the limits or unknown).
    /// - Returns: epochs × 26, row-major.
    static func compute(nn: [Double], windows: [Range<Int>]) -> [Double] {
        let widest = windows.map(\.count).max() ?? 0
        var out: [Double] = []
        out.reserveCapacity(windows.count * names.count)
        for window in windows {
            var row = epoch(nn[window])
            fillPNN(&row, widestWindow: widest)
            out.append(contentsOf: row)
        }
        return out
    }

    /// One epoch's 26 features from the intervals of its window alone; pNN50 and pNN20 hold the
    /// counts NN50 and NN20 until `fillPNN` divides them by the recording's widest window.
    ///
    /// sleepecg reduces a row padded with NaN to that widest window; the reductions skip NaN, so
    /// only numpy's pairwise summation order differs here (last bits), and an epoch's features
    /// depend on nothing but its own window: what lets them be computed once and kept.
    static func epoch(_ window: ArraySlice<Double>) -> [Double] {
        features(row: Array(window))
    }

    /// pNN50 and pNN20 as sleepecg has them: `nanmean` of a boolean array has no NaN, so the count
    /// is divided by every column of the padded row's differences, (widest window − 1).
    static func fillPNN(_ row: inout [Double], widestWindow: Int) {
        let columns = Double(max(widestWindow - 1, 0))
        row[pnn50Index] = row[7] / columns
        row[pnn20Index] = row[8] / columns
    }

    private static func features(row: [Double]) -> [Double] {
        typealias R = NumpyReductions
        let meanNN = R.nanMean(row)
        let maxNN = R.nanMax(row)
        let minNN = R.nanMin(row)
        let rangeNN = maxNN - minNN
        let sdnn = R.nanStd(row, ddof: 1)

        let sd = row.count > 1 ? (1..<row.count).map { row[$0] - row[$0 - 1] } : []
        let rmssd = R.nanMean(sd.map { $0 * $0 }).squareRoot()
        let sdsd = R.nanStd(sd, ddof: 1)
        let nn50 = Double(sd.filter { abs($0) > 0.05 }.count)
        let nn20 = Double(sd.filter { abs($0) > 0.02 }.count)
        // Filled in by `fillPNN`, which knows the recording's widest window.
        let pnn50 = Double.nan
        let pnn20 = Double.nan

        let sorted = R.sortedValues(row)
        let medianNN = R.median(sorted: sorted)
        let madNN = R.median(sorted: R.sortedValues(row.map { abs($0 - medianNN) }))
        let iqrNN = R.percentile(sorted: sorted, 75) - R.percentile(sorted: sorted, 25)

        let cvNN = sdnn / meanNN
        let cvSD = sdsd / R.nanMean(sd)

        let meanHR = 60 / meanNN
        let maxHR = 60 / minNN
        let minHR = 60 / maxNN
        let stdHR = R.nanStd(row.map { 60 / $0 }, ddof: 1)

        // `x ** 0.5` on an array is numpy's sqrt.
        let sd1 = (sdsd * sdsd * 0.5).squareRoot()
        let sd2 = (2 * (sdnn * sdnn) - sd1 * sd1).squareRoot()
        let s = Double.pi * sd1 * sd2
        let ratio = sd1 / sd2
        let csi = sd2 / sd1
        let cvi = log10(sd1 * sd2 * 16)

        return [
            meanNN, maxNN, minNN, rangeNN, sdnn, rmssd, sdsd, nn50, nn20, pnn50, pnn20, medianNN, madNN, iqrNN,
            cvNN, cvSD, meanHR, maxHR, minHR, stdHR, sd1, sd2, s, ratio, csi, cvi,
        ]
    }
}
