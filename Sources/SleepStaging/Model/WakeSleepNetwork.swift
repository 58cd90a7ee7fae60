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
    func probabilities(features: [Double], epochs: Int) -> [[Double]] {
        let width = Self.inputWidth
        let maskValue = Float(WsGruMesaArchive.maskValue)
        var hidden: [[Double]] = []
        var mask: [Bool] = []
        hidden.reserveCapacity(epochs)
        for epoch in 0..<epochs {
            let row = (0..<width).map { index -> Float in
                let value = features[epoch * width + index]
                return value.isFinite ? Float(value) : maskValue
            }
            let keep = row.contains { $0 != maskValue }
            mask.append(keep)
            // Masking zeroes a masked step's inputs; the layers after it still run on it.
            let normalized = (0..<width).map { index in
                (keep ? Double(row[index]) : 0) * normalizeScale[index] + normalizeShift[index]
            }
            hidden.append(dense.apply(normalized).map { max(0, $0) })
        }
        let first = Self.bidirectional(gru1, hidden, mask)
        let second = Self.bidirectional(gru2, first, mask)
        return second.map { softmax(output.apply($0)) }
    }

    private static func bidirectional(
        _ layers: (forward: GRULayer, backward: GRULayer), _ inputs: [[Double]], _ mask: [Bool]
    ) -> [[Double]] {
        let forward = layers.forward.run(inputs, mask, order: Array(inputs.indices))
        let backward = layers.backward.run(inputs, mask, order: Array(inputs.indices.reversed()))
        return zip(forward, backward).map { $0 + $1 }
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

    /// Runs over `order` (forwards or backwards); outputs are indexed like `inputs`.
    func run(_ inputs: [[Double]], _ mask: [Bool], order: [Int]) -> [[Double]] {
        let units = Self.units
        var state = [Double](repeating: 0, count: units)
        var outputs = [[Double]](repeating: [Double](repeating: 0, count: units), count: inputs.count)
        for step in order where mask[step] {
            let x = input.apply(inputs[step])
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
            outputs[step] = state
        }
        return outputs
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
