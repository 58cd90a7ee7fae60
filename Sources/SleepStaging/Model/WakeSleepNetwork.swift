import Foundation

/// sleepecg's `ws-gru-mesa` Keras model, evaluated natively: Masking(-1) → BatchNormalization
/// (inference: moving statistics, ε = 0.001) → Dense(64) → ReLU → Bidirectional(GRU(8)) →
/// Bidirectional(GRU(8)) → Dense(3, softmax), over a whole night at once (the GRUs run forwards
/// and backwards over every epoch).
///
/// Keras semantics kept: the GRUs are `reset_after` (Keras' default: the reset gate multiplies
/// the recurrent projection *after* its bias, and the bias has an input and a recurrent row),
/// gates ordered z, r, h; a masked epoch (all 36 inputs equal to the mask value) keeps the state
/// and outputs zeros (`zero_output_for_mask`), in both directions; the backward output is flipped
/// back before the concatenation. Inputs are rounded to float32 as Keras does; the arithmetic is
/// double.
struct WakeSleepNetwork: Sendable {
    static let inputWidth = 36
    static let classes = 3

    private let normalizeScale: [Double]
    private let normalizeShift: [Double]
    /// The batch normalisation's moving mean: the mean of each input over the training data.
    let trainingMeans: [Double]
    private let dense: DenseLayer
    private let gru1: (forward: GRULayer, backward: GRULayer)
    private let gru2: (forward: GRULayer, backward: GRULayer)
    private let output: DenseLayer

    static let wsGruMesa = WakeSleepNetwork(weights: .wsGruMesa)

    init(weights: ModelWeights) {
        let width = Self.inputWidth
        let gamma = weights.tensor("batch_normalization/gamma", count: width)
        let beta = weights.tensor("batch_normalization/beta", count: width)
        let mean = weights.tensor("batch_normalization/moving_mean", count: width)
        let variance = weights.tensor("batch_normalization/moving_variance", count: width)
        // Keras (float32): inv = γ / √(σ² + ε); x·inv + (β − μ·inv).
        var scale: [Double] = []
        var shift: [Double] = []
        for index in 0..<width {
            let inv = (1 / (variance[index] + Float(0.001)).squareRoot()) * gamma[index]
            scale.append(Double(inv))
            shift.append(Double(-mean[index] * inv + beta[index]))
        }
        normalizeScale = scale
        normalizeShift = shift
        trainingMeans = mean.map(Double.init)
        dense = DenseLayer(weights: weights, name: "dense", inputs: width, units: 64)
        gru1 = (GRULayer(weights: weights, name: "forward_gru", inputs: 64),
                GRULayer(weights: weights, name: "backward_gru", inputs: 64))
        gru2 = (GRULayer(weights: weights, name: "forward_gru_1", inputs: 16),
                GRULayer(weights: weights, name: "backward_gru_1", inputs: 16))
        output = DenseLayer(weights: weights, name: "dense_1", inputs: 16, units: Self.classes)
    }

    /// Class probabilities per epoch: [UNDEFINED, SLEEP, WAKE] (sleepecg's `wake-sleep` labels).
    /// - Parameter features: epochs × 36, row-major; non-finite values become the mask value -1
    ///   as in `sleepecg.stage()`.
    ///
    /// The dense layer's output of an epoch is made when a GRU reads it, and each bidirectional
    /// layer writes one flat array: held for the night, the 64 values per epoch and an array per
    /// epoch and layer were the largest part of a night's classification (issue 32). The
    /// arithmetic is the same, value for value.
    func probabilities(features: [Double], epochs: Int) -> [[Double]] {
        let width = Self.inputWidth
        let maskValue = Float(WsGruMesaArchive.maskValue)
        func row(_ epoch: Int) -> [Float] {
            (0..<width).map { index -> Float in
                let value = features[epoch * width + index]
                return value.isFinite ? Float(value) : maskValue
            }
        }
        let mask = (0..<epochs).map { epoch in row(epoch).contains { $0 != maskValue } }
        // Masking zeroes a masked step's inputs; the GRUs skip it (nothing reads its dense output).
        func hidden(_ epoch: Int) -> [Double] {
            let inputs = row(epoch)
            let normalized = (0..<width).map { index in Double(inputs[index]) * normalizeScale[index] + normalizeShift[index] }
            return dense.apply(normalized).map { max(0, $0) }
        }
        let first = Self.bidirectional(gru1, count: epochs, input: hidden, mask)
        let second = Self.bidirectional(gru2, count: epochs, input: { Array(first[($0 * Self.pairWidth)..<(($0 + 1) * Self.pairWidth)]) }, mask)
        return (0..<epochs).map { epoch in
            softmax(output.apply(Array(second[(epoch * Self.pairWidth)..<((epoch + 1) * Self.pairWidth)])))
        }
    }

    /// A bidirectional layer's output per epoch: the forward GRU's 8 values, then the backward's.
    static let pairWidth = 2 * GRULayer.units

    /// Epochs × `pairWidth`, row-major; a masked epoch's row is zeros.
    private static func bidirectional(
        _ layers: (forward: GRULayer, backward: GRULayer), count: Int, input: (Int) -> [Double], _ mask: [Bool]
    ) -> [Double] {
        var outputs = [Double](repeating: 0, count: count * pairWidth)
        layers.forward.run(count: count, input: input, mask, forwards: true, into: &outputs, column: 0, stride: pairWidth)
        layers.backward.run(count: count, input: input, mask, forwards: false, into: &outputs, column: GRULayer.units, stride: pairWidth)
        return outputs
    }

    private func softmax(_ logits: [Double]) -> [Double] {
        let largest = logits.max() ?? 0
        let exps = logits.map { exp($0 - largest) }
        let total = exps.reduce(0, +)
        return exps.map { $0 / total }
    }
}

/// `y = x·W + b`, W stored input × units as Keras keeps it.
struct DenseLayer: Sendable {
    let inputs: Int
    let units: Int
    let kernel: [Double]
    let bias: [Double]

    init(weights: ModelWeights, name: String, inputs: Int, units: Int) {
        self.inputs = inputs
        self.units = units
        kernel = weights.tensor("\(name)/kernel", count: inputs * units).map(Double.init)
        bias = weights.tensor("\(name)/bias", count: units).map(Double.init)
    }

    func apply(_ x: [Double]) -> [Double] {
        var y = bias
        for row in 0..<inputs where x[row] != 0 {
            let value = x[row]
            let base = row * units
            for unit in 0..<units { y[unit] += value * kernel[base + unit] }
        }
        return y
    }
}

/// A Keras GRU layer (8 units, tanh, sigmoid, `reset_after`), returning every step's output.
struct GRULayer: Sendable {
    static let units = 8
    private let input: DenseLayer
    private let recurrentKernel: [Double]
    private let recurrentBias: [Double]

    init(weights: ModelWeights, name: String, inputs: Int) {
        let units = Self.units
        let kernel = weights.tensor("\(name)/gru_cell/kernel", count: inputs * 3 * units).map(Double.init)
        let recurrent = weights.tensor("\(name)/gru_cell/recurrent_kernel", count: units * 3 * units).map(Double.init)
        let bias = weights.tensor("\(name)/gru_cell/bias", count: 2 * 3 * units).map(Double.init)
        input = DenseLayer(inputs: inputs, units: 3 * units, kernel: kernel, bias: Array(bias[0..<(3 * units)]))
        recurrentKernel = recurrent
        recurrentBias = Array(bias[(3 * units)...])
    }

    /// Runs over the `count` steps forwards or backwards, reading step i's input as `input(i)`;
    /// step i's output goes to `outputs[i * stride + column ..< + units]` (left as it is for a
    /// masked step).
    func run(
        count: Int, input: (Int) -> [Double], _ mask: [Bool], forwards: Bool, into outputs: inout [Double], column: Int, stride: Int
    ) {
        let units = Self.units
        var state = [Double](repeating: 0, count: units)
        for position in 0..<count {
            let step = forwards ? position : count - 1 - position
            guard mask[step] else { continue }
            let x = self.input.apply(input(step))
            var inner = recurrentBias
            for row in 0..<units {
                let h = state[row]
                let base = row * 3 * units
                for column in 0..<(3 * units) { inner[column] += h * recurrentKernel[base + column] }
            }
            var next = state
            for unit in 0..<units {
                let z = sigmoid(x[unit] + inner[unit])
                let r = sigmoid(x[units + unit] + inner[units + unit])
                let candidate = tanh(x[2 * units + unit] + r * inner[2 * units + unit])
                next[unit] = z * state[unit] + (1 - z) * candidate
            }
            state = next
            for unit in 0..<units { outputs[step * stride + column + unit] = state[unit] }
        }
    }

    private func sigmoid(_ x: Double) -> Double { 1 / (1 + exp(-x)) }
}

extension DenseLayer {
    init(inputs: Int, units: Int, kernel: [Double], bias: [Double]) {
        self.inputs = inputs
        self.units = units
        self.kernel = kernel
        self.bias = bias
    }
}
