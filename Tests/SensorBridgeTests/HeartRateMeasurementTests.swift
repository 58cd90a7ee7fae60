import Testing

@testable import SensorBridge

@Suite("Heart Rate Measurement 0x2A37")
struct HeartRateMeasurementTests {
    func parse(_ bytes: [UInt8]) -> HeartRateMeasurement? {
        try? HeartRateMeasurement.parse(bytes).get()
    }

    @Test("real-device vectors")
    func realVectors() throws {
        #expect(parse([0x06, 0x3C]) == HeartRateMeasurement(bpm: 60, contact: .detected, energyKJ: nil, rrIntervals: []))
        #expect(parse([0x16, 0x3C, 0x11, 0x04]) == HeartRateMeasurement(bpm: 60, contact: .detected, energyKJ: nil, rrIntervals: [1041]))
        #expect(parse([0x16, 0x48, 0x54, 0x01, 0xEC, 0x02]) == HeartRateMeasurement(bpm: 72, contact: .detected, energyKJ: nil, rrIntervals: [340, 748]))
        #expect(parse([0x02, 0x3C]) == HeartRateMeasurement(bpm: 60, contact: .unsupported, energyKJ: nil, rrIntervals: []))
        #expect(parse([0x01, 0x01, 0x01]) == HeartRateMeasurement(bpm: 257, contact: .unsupported, energyKJ: nil, rrIntervals: []))
    }

    @Test("every flag combination of value size, contact, energy and RR", arguments: 0..<32)
    func flagCombinations(flags: Int) throws {
        let wide = flags & 0x01 != 0, energy = flags & 0x08 != 0, rr = flags & 0x10 != 0
        var bytes: [UInt8] = [UInt8(flags)]
        bytes += wide ? [0x2C, 0x01] : [0x5A]  // 300 or 90 bpm
        if energy { bytes += [0x10, 0x27] }  // 10 000 kJ
        if rr { bytes += [0x00, 0x04, 0x00, 0x02] }  // 1024, 512
        let measurement = try HeartRateMeasurement.parse(bytes).get()
        #expect(measurement.bpm == (wide ? 300 : 90))
        #expect(measurement.energyKJ == (energy ? 10_000 : nil))
        #expect(measurement.rrIntervals == (rr ? [1024, 512] : []))
        let expectedContact: HeartRateMeasurement.Contact =
            switch (flags >> 1) & 0x03 {
            case 2: .notDetected
            case 3: .detected
            default: .unsupported
            }
        #expect(measurement.contact == expectedContact)
    }

    @Test("truncated or inconsistent payloads are rejected with a reason", arguments: [
        [UInt8](), [0x00], [0x01, 0x3C], [0x08, 0x3C, 0x10], [0x10, 0x3C], [0x10, 0x3C, 0x11], [0x16, 0x3C, 0x11, 0x04, 0x22],
        [0x06, 0x3C, 0x00],
    ])
    func rejected(bytes: [UInt8]) {
        guard case .failure(let rejection) = HeartRateMeasurement.parse(bytes) else {
            Issue.record("accepted \(bytes)")
            return
        }
        #expect(!rejection.description.isEmpty)
    }

    @Test("validity: 0 bpm, no contact, or outside 25–250 are invalid")
    func validity() throws {
        #expect(parse([0x06, 0x3C])?.isValid == true)
        #expect(parse([0x02, 0x3C])?.isValid == true, "contact unsupported is not contact lost")
        #expect(parse([0x06, 0x00])?.isValid == false)
        #expect(parse([0x04, 0x3C])?.isValid == false, "contact supported but not detected")
        #expect(parse([0x06, 0x18])?.isValid == false, "24 bpm")
        #expect(parse([0x06, 0x19])?.isValid == true, "25 bpm")
        #expect(parse([0x07, 0xFA, 0x00])?.isValid == true, "250 bpm")
        #expect(parse([0x07, 0xFB, 0x00])?.isValid == false, "251 bpm")
    }
}
