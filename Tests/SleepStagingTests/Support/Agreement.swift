import SleepStaging

/// How far the port's numbers are from sleepecg's, feature by feature and epoch by epoch.
struct Agreement {
    /// Largest |port − sleepecg| and largest |port − sleepecg| / max(|port|, |sleepecg|) per feature,
    /// over the epochs where both are finite.
    var maxAbsolute: [Double]
    var maxRelative: [Double]
    /// Epochs × features where one is NaN/±inf and the other is not (or a different non-finite).
    var finiteMismatches: [(epoch: Int, feature: String, port: Double, sleepecg: Double)]
    var epochs: Int
    var labelsAgreeing: Int
    var maxProbabilityDifference: Double

    var labelAgreement: Double { epochs == 0 ? 0 : Double(labelsAgreeing) / Double(epochs) }
    var worstAbsolute: Double { maxAbsolute.max() ?? 0 }
    var worstRelative: Double { maxRelative.max() ?? 0 }

    init(port: SleepFeatures, portEpochs: [SleepEpoch], reference: SleepecgReference.Result) {
        let width = SleepFeatures.names.count
        epochs = min(port.epochCount, reference.epochs)
        maxAbsolute = Array(repeating: 0, count: width)
        maxRelative = Array(repeating: 0, count: width)
        finiteMismatches = []
        for epoch in 0..<epochs {
            for feature in 0..<width {
                let a = port[epoch, feature]
                let b = reference.features[epoch * width + feature]
                if a.isFinite && b.isFinite {
                    let difference = abs(a - b)
                    maxAbsolute[feature] = max(maxAbsolute[feature], difference)
                    let scale = max(abs(a), abs(b))
                    if scale > 0 { maxRelative[feature] = max(maxRelative[feature], difference / scale) }
                } else if !(a.isNaN && b.isNaN) && a != b {
                    finiteMismatches.append((epoch, SleepFeatures.names[feature], a, b))
                }
            }
        }
        var agreeing = 0
        var probability = 0.0
        for epoch in 0..<min(epochs, portEpochs.count) {
            let p = (0..<3).map { Double(reference.probabilities[epoch * 3 + $0]) }
            let label = p.firstIndex(of: p.max() ?? 0) ?? 0
            if label == portEpochs[epoch].stage.rawValue { agreeing += 1 }
            probability = max(probability, abs(p[1] - portEpochs[epoch].sleepProbability), abs(p[2] - portEpochs[epoch].wakeProbability))
        }
        labelsAgreeing = agreeing
        maxProbabilityDifference = probability
    }

    /// The features furthest from sleepecg, for the log.
    func summary(top: Int = 5) -> String {
        let ranked = SleepFeatures.names.indices.sorted { maxRelative[$0] > maxRelative[$1] }.prefix(top)
        let worst = ranked.map { "\(SleepFeatures.names[$0]) rel \(maxRelative[$0]) abs \(maxAbsolute[$0])" }
        return "\(epochs) epochs; labels agree \(labelsAgreeing)/\(epochs) (\(labelAgreement * 100) %); "
            + "max |Δp| \(maxProbabilityDifference); features max rel \(worstRelative), max abs \(worstAbsolute); "
            + "finite/non-finite mismatches \(finiteMismatches.count); worst: \(worst.joined(separator: ", "))"
    }
}
