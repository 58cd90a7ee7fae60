import SensorBridge
import Testing

/// Turning successive 0x2A5B measurements into revolutions and time. The recorded sequence is an
/// nRF Connect log of a Zwift Hub's CSC notifications quoted in github.com/Berg0162/simcline
/// issue 7 ("Test Zwift Hub FTMS"); everything else is synthesised to hit one rule each.
@Suite("CSC revolutions between measurements")
struct CSCRevolutionsTests {
    typealias Wheel = CSCMeasurement.Wheel
    typealias Crank = CSCMeasurement.Crank

    static func measurement(_ hex: String) throws -> CSCMeasurement { try CSCMeasurement.parse(hex: hex).get() }

    /// Receive time (s after 16:02:00) and value, as logged.
    static let zwiftHub: [(Double, String)] = [
        (0.017, "03a4000000184e4000a74c"), (0.871, "03a600000072524100c050"), (2.008, "03a7000000a6544200c754"),
        (3.007, "03a900000008594300c658"), (4.010, "03ab000000645d4400c55c"), (5.149, "03ad0000009f614500ce60"),
    ]

    @Test("a recorded Zwift Hub sequence: every step counted, about 60 rpm")
    func recordedSequence() throws {
        var follower = CSCFollower()
        var spans: [CSCRevolutions] = []
        for (seconds, hex) in Self.zwiftHub {
            spans.append(follower.add(try Self.measurement(hex), receivedSeconds: seconds))
        }
        #expect(spans.first == CSCRevolutions(wheel: .absent, crank: .absent), "nothing to compare the first with")
        let steps = Array(spans.dropFirst())
        #expect(steps.map(\.wheel) == [
            .counted(revolutions: 2, time1024: 1114), .counted(revolutions: 1, time1024: 564),
            .counted(revolutions: 2, time1024: 1122), .counted(revolutions: 2, time1024: 1116),
            .counted(revolutions: 2, time1024: 1083),
        ])
        #expect(steps.map(\.crank) == [
            .counted(revolutions: 1, time1024: 1049), .counted(revolutions: 1, time1024: 1031),
            .counted(revolutions: 1, time1024: 1023), .counted(revolutions: 1, time1024: 1023),
            .counted(revolutions: 1, time1024: 1033),
        ])
        // The rule is stateless: the first and last measurements give the same totals.
        let whole = CSCRevolutions.between(try Self.measurement(Self.zwiftHub[0].1), try Self.measurement(Self.zwiftHub[5].1))
        #expect(whole.crank == .counted(revolutions: 5, time1024: 5159))
        #expect(whole.wheel == .counted(revolutions: 9, time1024: 4999))
        let rpm = 5.0 * 60 * 1024 / 5159
        #expect(abs(rpm - 59.55) < 0.01)
    }

    @Test("wheel revolutions wrap at 2^32")
    func wheelWrap() {
        let span = CSCRevolutions.wheel(from: Wheel(revolutions: .max - 1, eventTime: 1000), to: Wheel(revolutions: 1, eventTime: 2024))
        #expect(span == .counted(revolutions: 3, time1024: 1024))
    }

    @Test("crank revolutions wrap at 2^16")
    func crankWrap() {
        let span = CSCRevolutions.crank(from: Crank(revolutions: 0xFFFF, eventTime: 1000), to: Crank(revolutions: 1, eventTime: 2024))
        #expect(span == .counted(revolutions: 2, time1024: 1024))
    }

    @Test("event times wrap at 2^16 (64 s), for the wheel and the crank")
    func eventTimeWrap() {
        #expect(CSCRevolutions.wheel(from: Wheel(revolutions: 10, eventTime: 0xFF00), to: Wheel(revolutions: 12, eventTime: 0x0100))
            == .counted(revolutions: 2, time1024: 512))
        #expect(CSCRevolutions.crank(from: Crank(revolutions: 0xFFFF, eventTime: 0xFC00), to: Crank(revolutions: 0, eventTime: 0x0000))
            == .counted(revolutions: 1, time1024: 1024), "count and time wrapping together")
    }

    @Test("a stopped wheel and crank repeat themselves: unchanged, no revolution, no time")
    func stopped() throws {
        let value = try Self.measurement("03452301000004c8000008")
        let repeated = CSCRevolutions.between(value, value, secondsApart: 1)
        #expect(repeated == CSCRevolutions(wheel: .unchanged, crank: .unchanged))
        #expect(repeated.wheel.revolutions == 0 && repeated.crank.revolutions == 0)
    }

    @Test("a new event time without a new revolution counts time only")
    func timeWithoutRevolution() {
        #expect(CSCRevolutions.crank(from: Crank(revolutions: 5, eventTime: 100), to: Crank(revolutions: 5, eventTime: 1124))
            == .counted(revolutions: 0, time1024: 1024))
    }

    @Test("a crank-only and a wheel-only sensor: the other channel is absent")
    func singleChannel() throws {
        let crankOnly = CSCRevolutions.between(try Self.measurement("02c8000008"), try Self.measurement("02c900000c"))
        #expect(crankOnly == CSCRevolutions(wheel: .absent, crank: .counted(revolutions: 1, time1024: 1024)))
        let wheelOnly = CSCRevolutions.between(try Self.measurement("01452301000004"), try Self.measurement("01472301000008"))
        #expect(wheelOnly == CSCRevolutions(wheel: .counted(revolutions: 2, time1024: 1024), crank: .absent))
    }

    @Test(
        "a reset — a count that goes back, or jumps further than the time allows — counts nothing",
        arguments: [
            (Crank(revolutions: 5000, eventTime: 30000), Crank(revolutions: 3, eventTime: 900)),  // battery change
            (Crank(revolutions: 40000, eventTime: 30000), Crank(revolutions: 0, eventTime: 31024)),  // set to 0, 1 s later
            (Crank(revolutions: 200, eventTime: 1000), Crank(revolutions: 199, eventTime: 2024)),  // one back
            (Crank(revolutions: 200, eventTime: 1000), Crank(revolutions: 207, eventTime: 2024)),  // 7 in 1 s: 420 rpm
            (Crank(revolutions: 200, eventTime: 1000), Crank(revolutions: 201, eventTime: 1000)),  // a turn in no time
        ])
    func crankReset(previous: Crank, current: Crank) {
        #expect(CSCRevolutions.crank(from: previous, to: current) == .reset)
        #expect(CSCRevolutions.Span.reset.revolutions == 0)
    }

    @Test("a wheel count set back (SC Control Point Set Cumulative Value) is a reset, a fast wheel is not")
    func wheelReset() {
        #expect(CSCRevolutions.wheel(from: Wheel(revolutions: 100_000, eventTime: 500), to: Wheel(revolutions: 0, eventTime: 1524)) == .reset)
        #expect(CSCRevolutions.wheel(from: Wheel(revolutions: 10, eventTime: 500), to: Wheel(revolutions: 5, eventTime: 1524)) == .reset)
        #expect(CSCRevolutions.wheel(from: Wheel(revolutions: 10, eventTime: 500), to: Wheel(revolutions: 25, eventTime: 1524))
            == .counted(revolutions: 15, time1024: 1024), "15 rev/s: 113 km/h on a 2.1 m wheel, still a bicycle")
    }

    @Test("measurements 64 s or more apart keep their revolutions but no time")
    func untimed() {
        let before = Wheel(revolutions: 1000, eventTime: 100)
        #expect(CSCRevolutions.wheel(from: before, to: Wheel(revolutions: 1300, eventTime: 200), secondsApart: 100) == .untimed(revolutions: 300))
        #expect(CSCRevolutions.wheel(from: before, to: Wheel(revolutions: 9000, eventTime: 200), secondsApart: 100) == .reset)
        #expect(CSCRevolutions.Span.untimed(revolutions: 300).revolutions == 300)
    }

    @Test("a combined sensor that alternates wheel and crank notifications still counts both")
    func alternating() throws {
        var follower = CSCFollower()
        let sent = ["01452301000004", "02c8000008", "01472301000008", "02c900000c", "01482301000010"]
        var results: [CSCRevolutions] = []
        for (index, hex) in sent.enumerated() {
            results.append(follower.add(try Self.measurement(hex), receivedSeconds: Double(index) * 0.5))
        }
        #expect(results.map(\.wheel) == [.absent, .absent, .counted(revolutions: 2, time1024: 1024), .absent, .counted(revolutions: 1, time1024: 2048)])
        #expect(results.map(\.crank) == [.absent, .absent, .absent, .counted(revolutions: 1, time1024: 1024), .absent])
        #expect(CSCRevolutions.between(try Self.measurement(sent[0]), try Self.measurement(sent[1])) == CSCRevolutions(wheel: .absent, crank: .absent),
                "measurement against measurement, an alternating sensor never counts")
    }

    @Test("after a stop longer than 64 s the next turn is untimed, not a wrong rate")
    func longStop() {
        var follower = CSCFollower()
        let stopped = CSCMeasurement(crank: Crank(revolutions: 10, eventTime: 1000))
        #expect(follower.add(stopped, receivedSeconds: 0).crank == .absent)
        for second in 1...100 {
            #expect(follower.add(stopped, receivedSeconds: Double(second)).crank == .unchanged)
        }
        // The next revolution 100.5 s after the last: its event time has wrapped once.
        let resumed = CSCMeasurement(crank: Crank(revolutions: 11, eventTime: UInt16((1000 + 102_912) % 65536)))
        #expect(follower.add(resumed, receivedSeconds: 101).crank == .untimed(revolutions: 1))
        let next = CSCMeasurement(crank: Crank(revolutions: 12, eventTime: UInt16((1000 + 102_912 + 700) % 65536)))
        #expect(follower.add(next, receivedSeconds: 101.7).crank == .counted(revolutions: 1, time1024: 700))
    }
}
