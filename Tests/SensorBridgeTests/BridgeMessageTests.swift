import Foundation
import Testing
import TestKit

@testable import SensorBridge

@Suite("Heart-rate bridge messages")
struct BridgeMessageTests {
    func parse(_ line: String) -> Result<BridgeMessage, BridgeMessage.Rejection> {
        BridgeMessage.parse(Array(line.utf8))
    }

    static func fixtureLines() throws -> [Substring] {
        try String(contentsOfFile: Tools.fixture("hr/nsr-60min.ndjson"), encoding: .utf8).split(separator: "\n")
    }

    @Test("every message of the real fixture parses, valid, with its sensor, stamp and every interval")
    func realFixtureParses() throws {
        let lines = try Self.fixtureLines()
        #expect(lines.count == 3599)
        var beats = 0
        for line in lines {
            let message = try BridgeMessage.parse(Array(line.utf8)).get()
            #expect(message.heartRate?.contact == .detected && message.heartRate?.isValid == true)
            #expect(message.sensor == "nsr-strap" && message.timestamp != nil)
            beats += message.heartRate?.rrIntervals.count ?? 0
        }
        #expect(beats == 4684 || beats == 4683, "the source has 4684 intervals; the last may fall after the last whole second")
    }

    @Test("in every message of the real fixture raw agrees with its plain bpm and rr")
    func realFixture() throws {
        for line in try Self.fixtureLines() {
            let message = try BridgeMessage.parse(Array(line.utf8)).get()
            let plain = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(message.heartRate?.bpm == plain["bpm"] as? Int)
            let rrMs = plain["rr"] as? [Int] ?? []
            #expect(message.heartRate?.rrIntervals == rrMs.map { Int((Double($0) * 1024 / 1000).rounded()) })
        }
    }

    @Test("the spec's example form")
    func example() throws {
        let message = try parse(#"{"ts":"2026-11-21T08:00:01.250Z","seq":7,"sensor":"polar-h10","raw":"16485401ec02"}"#).get()
        #expect(message.sensor == "polar-h10")
        #expect(message.seq == 7)
        #expect(message.timestamp == ISO8601DateFormatter().date(from: "2026-11-21T08:00:01Z")?.addingTimeInterval(0.25))
        #expect(message.heartRate?.bpm == 72 && message.heartRate?.rrIntervals == [340, 748])
    }

    @Test("malformed lines are rejected with a reason", arguments: [
        "", "not json", "[1,2]", #"{"raw":"063c"}"#, #"{"sensor":"s"}"#, #"{"sensor":"","raw":"063c"}"#,
        #"{"sensor":"a/b","raw":"063c"}"#, #"{"sensor":1,"raw":"063c"}"#, #"{"sensor":"s","raw":"06 3c"}"#,
        #"{"sensor":"s","raw":"063"}"#, #"{"sensor":"s","raw":"zz"}"#, #"{"sensor":"s","raw":""}"#, #"{"sensor":"s","raw":"10"}"#,
        #"{"sensor":"s","raw":42}"#,
    ])
    func malformed(line: String) {
        guard case .failure(let rejection) = parse(line) else {
            Issue.record("accepted: \(line)")
            return
        }
        #expect(!rejection.description.isEmpty)
    }

    @Test("an overlong line is rejected before it is parsed")
    func overlong() {
        let line = #"{"sensor":"s","raw":"063c","pad":""# + String(repeating: "x", count: 5000) + #""}"#
        #expect(BridgeMessage.parse(Array(line.utf8), maxBytes: 4096) == .failure(.tooLong(line.utf8.count)))
    }

    @Test("an unreadable timestamp leaves the time to the receiver")
    func badTimestamp() throws {
        #expect(try parse(#"{"ts":"yesterday","sensor":"s","raw":"063c"}"#).get().timestamp == nil)
    }
}

/// The reference bridge in deploy/hr-bridge, as far as a machine without Bluetooth allows.
@Suite("Reference heart-rate bridge")
struct ReferenceBridgeTests {
    static let script = "\(Tools.packageRoot)/deploy/hr-bridge/keepalive_hr_bridge.py"

    @Test("its own tests pass: encoding, stall watchdog, reconnect loop against a stand-in for bleak")
    func pythonTests() async throws {
        let process = try ManagedProcess(
            name: "unittest", executable: Tools.find("python3"),
            arguments: ["-m", "unittest", "-v", "\(Tools.packageRoot)/deploy/hr-bridge/test_keepalive_hr_bridge.py"])
        let status = await process.waitForExit(timeout: 60)
        #expect(status == 0, "\(process.text)")
    }

    @Test("with the real bleak against a fake BlueZ (python3-dbusmock on a private bus): streams notifications, reconnects a silent strap")
    func bleakAgainstMockedBlueZ() async throws {
        // Debian's python, where python3-bleak and python3-dbusmock are installed by scripts/setup.sh.
        let process = try ManagedProcess(
            name: "bluez-mock", executable: "/usr/bin/python3",
            arguments: ["-m", "unittest", "-v", "\(Tools.packageRoot)/deploy/hr-bridge/test_bluez_mock.py"])
        let status = await process.waitForExit(timeout: 120)
        #expect(status == 0, "\(process.text.suffix(3000))")
        #expect(!process.text.contains("skipped"), "bleak, dbusmock or dbus-daemon missing: \(process.text.suffix(500))")
    }

    @Test("what it emits is what the agent parses", arguments: ["063c", "163c1104", "16485401ec02", "023c", "010101", "1e3c10271104"])
    func encodingRoundTrip(hex: String) async throws {
        let process = try ManagedProcess(
            name: "bridge", executable: Tools.find("python3"), arguments: [Self.script, "--encode-hex", hex, "--sensor", "strap"])
        #expect(await process.waitForExit(timeout: 20) == 0)
        let line = try #require(process.lines.first)
        let message = try BridgeMessage.parse(Array(line.utf8)).get()
        #expect(message.raw == HexBytes.decode(hex))
        #expect(message.sensor == "strap" && message.timestamp != nil)
        let plain = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(plain["bpm"] as? Int == message.heartRate?.bpm)
    }

    @Test("what it emits for a CSC value (--char 2a5b) is what the agent parses", arguments: ["03a4000000184e4000a74c", "02c8000008", "01452301000004"])
    func cscRoundTrip(hex: String) async throws {
        let process = try ManagedProcess(
            name: "bridge", executable: Tools.find("python3"), arguments: [Self.script, "--encode-hex", hex, "--char", "2a5b", "--sensor", "bike"])
        #expect(await process.waitForExit(timeout: 20) == 0)
        let line = try #require(process.lines.first)
        let message = try BridgeMessage.parse(Array(line.utf8), forwarded: [CSCMeasurement.self]).get()
        #expect(message.raw == HexBytes.decode(hex))
        #expect(message.reading == .forwarded(try CSCMeasurement.parse(hex: hex).get()))
    }

    static func parse(_ line: String) -> Result<BridgeMessage, BridgeMessage.Rejection> { BridgeMessage.parse(Array(line.utf8)) }

    @Test("char 2a53, in either case, is an RSC measurement")
    func rscCharacteristic() throws {
        func parse(_ line: String) -> Result<BridgeMessage, BridgeMessage.Rejection> { Self.parse(line) }
        let rsc = try parse(#"{"ts":"2026-11-21T08:00:01.000Z","seq":2,"sensor":"footpod","char":"2a53","raw":"070003aa6a0057300000"}"#).get()
        guard case .runningSpeedCadence(let measurement) = rsc.reading else {
            Issue.record("not an RSC reading: \(rsc.reading)")
            return
        }
        #expect(measurement.cadence == 170 && measurement.isRunning && rsc.heartRate == nil && rsc.raw.count == 10)
        let upper = try parse(#"{"sensor":"footpod","char":"2A53","raw":"000003aa"}"#).get()
        #expect(upper.heartRate == nil)
    }

    @Test("char 2a5b, in either case, is a CSC measurement when a kind reads it; a bad one is rejected with the reason")
    func cscCharacteristic() throws {
        func parse(_ line: String) -> Result<BridgeMessage, BridgeMessage.Rejection> { BridgeMessage.parse(Array(line.utf8), forwarded: [CSCMeasurement.self]) }
        let csc = try parse(#"{"ts":"2026-11-21T08:00:01.000Z","seq":3,"sensor":"bike","char":"2a5b","raw":"03a4000000184e4000a74c","cadence":60}"#).get()
        guard case .forwarded(let value) = csc.reading, let measurement = value as? CSCMeasurement else {
            Issue.record("not a CSC reading: \(csc.reading)")
            return
        }
        #expect(measurement.wheel == .init(revolutions: 164, eventTime: 19992) && measurement.crank == .init(revolutions: 64, eventTime: 19623))
        #expect(csc.raw.count == 11 && csc.heartRate == nil && csc.seq == 3)
        let upper = try parse(#"{"sensor":"bike","char":"2A5B","raw":"02c8000008"}"#).get()
        #expect(upper.reading == .forwarded(CSCMeasurement(crank: .init(revolutions: 200, eventTime: 2048))))
        #expect(upper.reading != .forwarded(CSCMeasurement(crank: .init(revolutions: 201, eventTime: 2048))))
        let noData = BridgeMessage.Rejection.badValue("0x2A5B", "neither wheel nor crank revolution data present")
        #expect(throws: noData) { try parse(#"{"sensor":"bike","char":"2a5b","raw":"00"}"#).get() }
        #expect(throws: BridgeMessage.Rejection.badValue("0x2A5B", "truncated: last crank event time")) { try parse(#"{"sensor":"bike","char":"2a5b","raw":"02c800"}"#).get() }
        #expect(throws: BridgeMessage.Rejection.missing("raw")) { try parse(#"{"sensor":"bike","char":"2a5b"}"#).get() }
        #expect(noData.description == "0x2A5B: neither wheel nor crank revolution data present")
        // Without a kind that reads it, 2a5b is a characteristic nothing stores.
        #expect(throws: BridgeMessage.Rejection.unknownCharacteristic("2a5b", known: ["2a37", "2a53", "pmd_acc"])) {
            try Self.parse(#"{"sensor":"bike","char":"2a5b","raw":"02c8000008"}"#).get()
        }
    }

    @Test("char pmd_acc is a batch of accelerometer samples")
    func accelerometerCharacteristic() throws {
        func parse(_ line: String) -> Result<BridgeMessage, BridgeMessage.Rejection> { Self.parse(line) }
        let acc = try parse(#"{"ts":"2026-11-21T08:00:00.000Z","sensor":"h10","char":"pmd_acc","rate_hz":50,"samples":[[944,350,17],[937,340,-10]]}"#).get()
        guard case .acceleration(let batch) = acc.reading else {
            Issue.record("not an accelerometer reading: \(acc.reading)")
            return
        }
        #expect(batch.rateHz == 50 && batch.samples.count == 2 && acc.raw.isEmpty)
    }

    @Test("char 2a37 is a heart-rate measurement")
    func heartRateCharacteristic() throws {
        #expect(try Self.parse(#"{"sensor":"h10","char":"2a37","raw":"063c"}"#).get().heartRate?.bpm == 60)
    }

    @Test("a bad RSC or accelerometer payload is rejected with the reason")
    func badPayloads() {
        func parse(_ line: String) -> Result<BridgeMessage, BridgeMessage.Rejection> { Self.parse(line) }
        #expect(throws: BridgeMessage.Rejection.badRSC(.truncated("instantaneous cadence"))) { try parse(#"{"sensor":"p","char":"2a53","raw":"000000"}"#).get() }
        #expect(throws: BridgeMessage.Rejection.missing("raw")) { try parse(#"{"sensor":"p","char":"2a53"}"#).get() }
        #expect(throws: BridgeMessage.Rejection.badAcceleration(.missing("rate_hz"))) { try parse(#"{"sensor":"h","char":"pmd_acc","samples":[[1,2,3]]}"#).get() }
    }

    @Test("an unknown or mistyped char is rejected with the reason")
    func unknownCharacteristic() {
        func parse(_ line: String) -> Result<BridgeMessage, BridgeMessage.Rejection> { Self.parse(line) }
        let unknown = BridgeMessage.parse(Array(#"{"sensor":"h","char":"2a63","raw":"00"}"#.utf8), forwarded: [CSCMeasurement.self])
        #expect(throws: BridgeMessage.Rejection.unknownCharacteristic("2a63", known: ["2a37", "2a53", "2a5b", "pmd_acc"])) { try unknown.get() }
        #expect(throws: BridgeMessage.Rejection.unknownCharacteristic("2a63", known: ["2a37", "2a53", "pmd_acc"])) { try parse(#"{"sensor":"h","char":"2a63","raw":"00"}"#).get() }
        #expect(BridgeMessage.Rejection.unknownCharacteristic("2a63", known: ["2a37", "2a53", "2a5b", "pmd_acc"]).description
            == #"unknown "char" "2a63" (2a37, 2a53, 2a5b or pmd_acc)"#)
        #expect(throws: BridgeMessage.Rejection.badField("char")) { try parse(#"{"sensor":"h","char":7,"raw":"063c"}"#).get() }
    }
}
