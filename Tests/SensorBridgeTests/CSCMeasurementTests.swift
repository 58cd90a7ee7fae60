import SensorBridge
import Testing

/// 0x2A5B vectors. The characteristic's definition (Bluetooth SIG
/// org.bluetooth.characteristic.csc_measurement, mirrored in github.com/oesmith/gatt-xml) gives
/// the layout but no example bytes: the synthesised vectors are worked out by hand from it. The
/// recorded ones are nRF Connect logs quoted in public issues, each cited where it is used.
@Suite("CSC Measurement 0x2A5B")
struct CSCMeasurementTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let hex: String
        let wheel: CSCMeasurement.Wheel?
        let crank: CSCMeasurement.Crank?
        var testDescription: String { hex }
    }

    /// Synthesised: wheel 0x00012345 = 74565 revolutions at 0x0400 (1 s in 1/1024 s); crank
    /// 0x00C8 = 200 revolutions at 0x0800 (2 s).
    static let vectors: [Vector] = [
        Vector(hex: "01452301000004", wheel: .init(revolutions: 74565, eventTime: 1024), crank: nil),
        Vector(hex: "02c8000008", wheel: nil, crank: .init(revolutions: 200, eventTime: 2048)),
        Vector(
            hex: "03452301000004c8000008", wheel: .init(revolutions: 74565, eventTime: 1024),
            crank: .init(revolutions: 200, eventTime: 2048)),
    ]

    @Test("each combination of flag bits 0–1 decodes and encodes back", arguments: vectors)
    func flagCombinations(vector: Vector) throws {
        let value = try CSCMeasurement.parse(hex: vector.hex).get()
        #expect(value.wheel == vector.wheel)
        #expect(value.crank == vector.crank)
        #expect(value.reservedFlags == 0)
        #expect(value.bytes == HexBytes.decode(vector.hex), "encodes back to the same bytes")
    }

    @Test("little-endian at every width: the top byte of each field is its last")
    func fieldWidths() throws {
        let value = try CSCMeasurement.parse(hex: "03fffffffffeff01fffeff").get()
        #expect(value.wheel == .init(revolutions: UInt32.max, eventTime: 0xFFFE))
        #expect(value.crank == .init(revolutions: 0xFF01, eventTime: 0xFFFE))
    }

    /// Recorded: a Wahoo sensor in nRF Connect, github.com/OpenTracksApp/OpenTracks issue 1054
    /// ("Wahoo sensor (0x2A5B)"): raw 03-00-00-00-00-10-01-21-00-C6-EB, which nRF Connect
    /// shows as wheel rev 0, last wheel event time 272, crank rev 33, last crank event time
    /// 60358 (it labels the 1/1024-s units "ms"). Both flags set although only the crank turned.
    @Test("a recorded Wahoo notification decodes as nRF Connect read it")
    func recordedWahoo() throws {
        let value = try CSCMeasurement.parse(hex: "030000000010012100c6eb").get()
        #expect(value.wheel == .init(revolutions: 0, eventTime: 272))
        #expect(value.crank == .init(revolutions: 33, eventTime: 60358))
    }

    @Test(
        "truncated, over-long and empty values are rejected with the reason",
        arguments: [
            ("", CSCMeasurement.Rejection.empty),
            ("00", .noData),
            ("fc", .noData),
            ("00c8000008", .noData),
            ("01", .truncated("cumulative wheel revolutions")),
            ("01452301", .truncated("cumulative wheel revolutions")),
            ("0145230100", .truncated("last wheel event time")),
            ("014523010000", .truncated("last wheel event time")),
            ("02c8", .truncated("cumulative crank revolutions")),
            ("02c80000", .truncated("last crank event time")),
            ("03452301000004", .truncated("cumulative crank revolutions")),
            ("03452301000004c80000", .truncated("last crank event time")),
            ("0145230100000400", .inconsistent("1 bytes beyond what the flags announce")),
            ("01452301000004c8000008", .inconsistent("4 bytes beyond what the flags announce")),
            ("03452301000004c800000800", .inconsistent("1 bytes beyond what the flags announce")),
        ])
    func rejections(hex: String, reason: CSCMeasurement.Rejection) {
        let bytes = hex.isEmpty ? [] : HexBytes.decode(hex) ?? [0xEE]
        #expect(CSCMeasurement.parse(bytes) == .failure(reason))
    }

    @Test("reserved flag bits 2–7 are ignored but kept")
    func reservedBits() throws {
        let value = try CSCMeasurement.parse(hex: "feC8000008").get()
        #expect(value.wheel == nil && value.crank == .init(revolutions: 200, eventTime: 2048))
        #expect(value.reservedFlags == 0xFC)
        #expect(value.bytes == [0xFE, 0xC8, 0x00, 0x00, 0x08])
    }

    @Test("text that is not hex is rejected", arguments: ["", "0", "zz", "02 c8000008"])
    func notHex(text: String) {
        #expect(CSCMeasurement.parse(hex: text) == .failure(.notHex))
    }

    @Test("the reasons read as a log line would show them")
    func descriptions() {
        #expect(CSCMeasurement.Rejection.noData.description == "neither wheel nor crank revolution data present")
        #expect(CSCMeasurement.Rejection.truncated("last crank event time").description == "truncated: last crank event time")
    }
}
