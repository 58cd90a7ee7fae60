import Foundation

/// The classifier's tensors, decoded once from the generated `WsGruMesaArchive` (float32,
/// little-endian, base64) and checked against the checksum and byte count written beside them.
struct ModelWeights: Sendable {
    /// Each tensor's values (row-major, as Keras stores a kernel: input × units) by its Keras name.
    let tensors: [String: [Float]]

    static let wsGruMesa: ModelWeights = {
        do {
            return try ModelWeights(
                base64: WsGruMesaArchive.base64, layout: WsGruMesaArchive.tensors,
                byteCount: WsGruMesaArchive.byteCount, fnv1a64: WsGruMesaArchive.fnv1a64)
        } catch {
            // The archive is compiled in and checked by the tests: failing here is a build defect.
            fatalError("ws-gru-mesa weights: \(error)")
        }
    }()

    init(base64: String, layout: [(name: String, shape: [Int])], byteCount: Int, fnv1a64 expected: UInt64) throws {
        guard let data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
            throw SleepStagingError.invalidInput("weights are not base64")
        }
        guard data.count == byteCount else {
            throw SleepStagingError.invalidInput("weights are \(data.count) bytes, expected \(byteCount)")
        }
        let checksum = Self.fnv1a64(data)
        guard checksum == expected else {
            throw SleepStagingError.invalidInput("weights checksum \(String(checksum, radix: 16)), expected \(String(expected, radix: 16))")
        }
        let needed = layout.reduce(0) { $0 + $1.shape.reduce(1, *) } * 4
        guard needed == data.count else {
            throw SleepStagingError.invalidInput("the layout needs \(needed) bytes, the weights have \(data.count)")
        }
        var tensors: [String: [Float]] = [:]
        var offset = 0
        for (name, shape) in layout {
            let count = shape.reduce(1, *)
            tensors[name] = (0..<count).map { index in
                let at = data.startIndex + offset + index * 4
                let bits = UInt32(data[at]) | UInt32(data[at + 1]) << 8 | UInt32(data[at + 2]) << 16 | UInt32(data[at + 3]) << 24
                return Float(bitPattern: bits)
            }
            offset += count * 4
        }
        self.tensors = tensors
    }

    func tensor(_ name: String, count: Int) -> [Float] {
        guard let values = tensors[name], values.count == count else {
            fatalError("ws-gru-mesa weights: no tensor \(name) of \(count) values")
        }
        return values
    }

    static func fnv1a64(_ data: Data) -> UInt64 {
        var value: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in data {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01B3
        }
        return value
    }
}
