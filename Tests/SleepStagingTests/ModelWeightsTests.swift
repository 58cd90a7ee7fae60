import Foundation
import Testing
import TestKit

@testable import SleepStaging

@Suite("ws-gru-mesa weights")
struct ModelWeightsTests {
    @Test("the compiled-in weights decode to sleepecg's architecture, checksum intact")
    func weightsDecode() throws {
        let weights = ModelWeights.wsGruMesa
        let expected: [String: [Int]] = [
            "batch_normalization/gamma": [36], "batch_normalization/beta": [36],
            "batch_normalization/moving_mean": [36], "batch_normalization/moving_variance": [36],
            "dense/kernel": [36, 64], "dense/bias": [64],
            "forward_gru/gru_cell/kernel": [64, 24], "forward_gru/gru_cell/recurrent_kernel": [8, 24],
            "forward_gru/gru_cell/bias": [2, 24],
            "backward_gru/gru_cell/kernel": [64, 24], "backward_gru/gru_cell/recurrent_kernel": [8, 24],
            "backward_gru/gru_cell/bias": [2, 24],
            "forward_gru_1/gru_cell/kernel": [16, 24], "forward_gru_1/gru_cell/recurrent_kernel": [8, 24],
            "forward_gru_1/gru_cell/bias": [2, 24],
            "backward_gru_1/gru_cell/kernel": [16, 24], "backward_gru_1/gru_cell/recurrent_kernel": [8, 24],
            "backward_gru_1/gru_cell/bias": [2, 24],
            "dense_1/kernel": [16, 3], "dense_1/bias": [3],
        ]
        #expect(Dictionary(uniqueKeysWithValues: WsGruMesaArchive.tensors.map { ($0.name, $0.shape) }) == expected)
        #expect(weights.tensors.count == expected.count)
        for (name, shape) in expected {
            #expect(weights.tensors[name]?.count == shape.reduce(1, *), "\(name)")
            #expect(weights.tensors[name]?.allSatisfy(\.isFinite) == true, "\(name)")
        }
        // 7 363 parameters: Keras' summary counts 14 656 with the optimizer's slots, 7 291 trainable + 72 BN statistics.
        #expect(weights.tensors.values.reduce(0) { $0 + $1.count } == 7_363)
        #expect(WsGruMesaArchive.featureIDs == SleepFeatures.names)
        #expect(WsGruMesaArchive.stagesMode == "wake-sleep")
    }

    @Test("a damaged archive is refused, not decoded")
    func damagedWeightsRefused() {
        var base64 = Array(WsGruMesaArchive.base64.filter { !$0.isWhitespace })
        base64[100] = base64[100] == "A" ? "B" : "A"
        #expect(throws: SleepStagingError.self) {
            try ModelWeights(
                base64: String(base64), layout: WsGruMesaArchive.tensors, byteCount: WsGruMesaArchive.byteCount,
                fnv1a64: WsGruMesaArchive.fnv1a64)
        }
    }

    @Test("the licence note travels with the weights")
    func licenceBesideWeights() throws {
        let licence = try String(contentsOfFile: "\(Tools.packageRoot)/Sources/SleepStaging/Model/LICENSE.sleepecg", encoding: .utf8)
        #expect(licence.contains("BSD 3-Clause License"))
        #expect(licence.contains("Florian Hofer, Clemens Brunner"))
        let source = try String(contentsOfFile: "\(Tools.packageRoot)/Sources/SleepStaging/Model/WsGruMesaArchive.swift", encoding: .utf8)
        #expect(source.contains("// Copyright (c) 2021, Florian Hofer, Clemens Brunner"))
    }
}
