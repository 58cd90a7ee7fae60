/// The numpy reductions sleepecg's features are made of, with numpy's semantics: NaN-skipping
/// (`nanmean`, `nanstd`, …), numpy's pairwise summation (so sums round as numpy's do), the
/// `linear` percentile with numpy's lerp. Each takes a row of the padded ("ragged") array exactly
/// as sleepecg builds it, NaN where a value is missing or padding.
enum NumpyReductions {
    /// `np.add.reduce` over a contiguous row: numpy's pairwise summation (blocks of 8 accumulators,
    /// halves above 128 elements), started from 0.
    static func pairwiseSum(_ values: UnsafeBufferPointer<Double>) -> Double {
        0.0 + pairwise(values.baseAddress, values.count)
    }

    private static func pairwise(_ base: UnsafePointer<Double>?, _ count: Int) -> Double {
        guard let base, count > 0 else { return 0 }
        if count < 8 {
            var sum = 0.0
            for index in 0..<count { sum += base[index] }
            return sum
        }
        if count <= 128 {
            var r0 = base[0], r1 = base[1], r2 = base[2], r3 = base[3]
            var r4 = base[4], r5 = base[5], r6 = base[6], r7 = base[7]
            var index = 8
            let whole = count - count % 8
            while index < whole {
                r0 += base[index]; r1 += base[index + 1]; r2 += base[index + 2]; r3 += base[index + 3]
                r4 += base[index + 4]; r5 += base[index + 5]; r6 += base[index + 6]; r7 += base[index + 7]
                index += 8
            }
            var sum = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            while index < count {
                sum += base[index]
                index += 1
            }
            return sum
        }
        var half = count / 2
        half -= half % 8
        return pairwise(base, half) + pairwise(base + half, count - half)
    }

    static func sum(_ values: [Double]) -> Double {
        values.withUnsafeBufferPointer { pairwiseSum($0) }
    }

    /// `np.nanmean`: NaNs replaced by 0, summed, divided by the count of the others.
    static func nanMean(_ row: [Double]) -> Double {
        var zeroed = row
        var count = 0
        for index in zeroed.indices {
            if zeroed[index].isNaN { zeroed[index] = 0 } else { count += 1 }
        }
        return sum(zeroed) / Double(count)
    }

    /// `np.nanstd(row, ddof=ddof)`: NaN when fewer than `ddof + 1` values.
    static func nanStd(_ row: [Double], ddof: Int) -> Double {
        var zeroed = row
        var count = 0
        for index in zeroed.indices {
            if zeroed[index].isNaN { zeroed[index] = 0 } else { count += 1 }
        }
        let mean = sum(zeroed) / Double(count)
        for index in zeroed.indices where !row[index].isNaN {
            let deviation = zeroed[index] - mean
            zeroed[index] = deviation * deviation
        }
        let degrees = count - ddof
        guard degrees > 0 else { return .nan }
        return (sum(zeroed) / Double(degrees)).squareRoot()
    }

    /// `np.nanmax` / `np.nanmin`: NaN for a row without values.
    static func nanMax(_ row: [Double]) -> Double {
        row.reduce(Double.nan) { result, value in value.isNaN ? result : (result.isNaN || value > result ? value : result) }
    }

    static func nanMin(_ row: [Double]) -> Double {
        row.reduce(Double.nan) { result, value in value.isNaN ? result : (result.isNaN || value < result ? value : result) }
    }

    /// The values of a row without its NaNs, sorted: what `nanmedian` / `nanpercentile` work on.
    static func sortedValues(_ row: [Double]) -> [Double] {
        row.filter { !$0.isNaN }.sorted()
    }

    /// `np.nanmedian` on sorted values: the middle one, or the mean of the middle two.
    static func median(sorted: [Double]) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        if sorted.count % 2 == 1 { return sorted[middle] }
        return (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// `np.nanpercentile(…, q)` with the default `linear` method, on sorted values.
    static func percentile(sorted: [Double], _ q: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let virtualIndex = (q / 100) * Double(sorted.count - 1)
        let previous = virtualIndex.rounded(.down)
        let lower = Int(previous)
        let upper = min(lower + 1, sorted.count - 1)
        return lerp(sorted[lower], sorted[upper], virtualIndex - previous)
    }

    /// numpy's `_lerp`: from the nearer end, so that t = 1 gives exactly b.
    static func lerp(_ a: Double, _ b: Double, _ t: Double) -> Double {
        let difference = b - a
        return t >= 0.5 ? b - difference * (1 - t) : a + difference * t
    }
}
