import SensorBridge
import Testing

/// 0x2A53 vectors worked out by hand from the field layout, one for every combination of flag
/// bits 0–2. Speed 0x0300 = 768/256 = 3.0 m/s, cadence 0xAA = 170/min, stride 0x006A = 106 cm,
/// total distance 0x00003039 = 12345 dm.
@Suite("RSC Measurement 0x2A53")
struct RSCMeasurementTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let hex: String
        let stride: Int?
        let total: UInt32?
        let running: Bool
        var testDescription: String { hex }
    }

    static let vectors: [Vector] = [
        Vector(hex: "000003aa", stride: nil, total: nil, running: false),
        Vector(hex: "010003aa6a00", stride: 106, total: nil, running: false),
        Vector(hex: "020003aa39300000", stride: nil, total: 12345, running: false),
        Vector(hex: "030003aa6a0039300000", stride: 106, total: 12345, running: false),
        Vector(hex: "040003aa", stride: nil, total: nil, running: true),
        Vector(hex: "050003aa6a00", stride: 106, total: nil, running: true),
        Vector(hex: "060003aa39300000", stride: nil, total: 12345, running: true),
        Vector(hex: "070003aa6a0039300000", stride: 106, total: 12345, running: true),
    ]

    @Test("every combination of flag bits 0–2 decodes", arguments: vectors)
    func flagCombinations(vector: Vector) throws {
        let value = try RSCMeasurement.parse(hex: vector.hex).get()
        #expect(value.speed256 == 768 && value.speedMetresPerSecond == 3.0)
        #expect(value.cadence == 170)
        #expect(value.strideLengthCm == vector.stride)
        #expect(value.totalDistanceDm == vector.total)
        #expect(value.isRunning == vector.running)
        #expect(value.reservedFlags == 0)
        #expect(value.bytes == HexBytes.decode(vector.hex), "encodes back to the same bytes")
    }

    @Test("units: stride length in 1/100 m, total distance in 1/10 m, speed in 1/256 m/s")
    func units() throws {
        let value = try RSCMeasurement.parse([0x03, 0x80, 0x02, 0xB4, 0x2C, 0x01, 0xFF, 0xFF, 0xFF, 0xFF]).get()
        #expect(value.speedMetresPerSecond == 2.5)
        #expect(value.cadence == 180)
        #expect(value.strideLengthMetres == 3.0)
        #expect(value.totalDistanceMetres == 429_496_729.5)
    }

    @Test(
        "truncated and over-long payloads are rejected with the reason",
        arguments: [
            ("", RSCMeasurement.Rejection.empty),
            ("00", .truncated("instantaneous speed")),
            ("0000", .truncated("instantaneous speed")),
            ("000003", .truncated("instantaneous cadence")),
            ("010003aa", .truncated("instantaneous stride length")),
            ("010003aa6a", .truncated("instantaneous stride length")),
            ("020003aa393000", .truncated("total distance")),
            ("030003aa6a00393000", .truncated("total distance")),
            ("000003aa00", .inconsistent("1 bytes beyond what the flags announce")),
            ("010003aa6a0039300000", .inconsistent("4 bytes beyond what the flags announce")),
            ("070003aa6a003930000000", .inconsistent("1 bytes beyond what the flags announce")),
        ])
    func rejections(hex: String, reason: RSCMeasurement.Rejection) {
        let bytes = hex.isEmpty ? [] : HexBytes.decode(hex) ?? [0xEE]
        #expect(RSCMeasurement.parse(bytes) == .failure(reason))
    }

    @Test("reserved flag bits 3–7 are ignored but kept")
    func reservedBits() throws {
        let value = try RSCMeasurement.parse(hex: "fc0003aa").get()
        #expect(value.isRunning && value.strideLengthCm == nil && value.totalDistanceDm == nil)
        #expect(value.reservedFlags == 0xF8)
    }

    @Test("a future field behind reserved flag bits is still rejected")
    func futureField() {
        #expect(RSCMeasurement.parse(hex: "0c0003aa0102") == .failure(.inconsistent("2 bytes beyond what the flags announce")))
    }

    @Test("text that is not hex is rejected", arguments: ["", "0", "zz0003aa", "00 03aa"])
    func notHex(text: String) {
        #expect(RSCMeasurement.parse(hex: text) == .failure(.notHex))
    }

    @Test("hex in either case")
    func hexCase() {
        #expect(HexBytes.decode("0A0b") == [0x0A, 0x0B])
        #expect(HexBytes.decode(String(repeating: "00", count: 513)) == nil, "more than 512 bytes")
    }
}
