/// The nearest-rank percentile of `values` (`p` in 0...1); NaN for none. Fault figures and
/// benchmark tables both report with it.
public func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))]
}
