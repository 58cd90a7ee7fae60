import SensorBridge
import StepCounting

/// What a bridge sent, as one number: the name of a notification stored at its receive time
/// (docs/contract.md, "Replays"). Its stored time came from when it arrived, so a second copy
/// (an MQTT redelivery, a serial or UDP bridge repeating its buffer, a restarted child resending
/// its last lines) would get another; this names it by its own content instead: the
/// characteristic, the bridge's `seq`, the stamp exactly as the bridge sent it (a clockless
/// bridge's 1970 time is its uptime, so a restarted bridge stamps again from zero), and the value
/// (`raw`, or an accelerometer batch's samples).
///
/// A bridge that restarts begins its `seq` again: its notifications are new unless the stamp and
/// the value match too, to the millisecond and the byte. A message without `seq` has no origin:
/// nothing tells a copy from a new notification with the same value, and new data is never dropped.
///
/// FNV-1a (64 bit): stable across runs and builds (Swift's `Hasher` is seeded per process), and
/// the store keeps the number.
enum BridgeOrigin {
    static func of(_ message: BridgeMessage) -> Int64? {
        guard let seq = message.seq else { return nil }
        var hash = FNV1a()
        switch message.reading {
        case .heartRate: hash.add(byte: 0x37)
        case .runningSpeedCadence: hash.add(byte: 0x53)
        case .acceleration(let batch):
            hash.add(byte: 0xAC)
            hash.add(batch.rateHz.bitPattern)
            for sample in batch.samples {
                hash.add(UInt64(bitPattern: Int64(sample.x)))
                hash.add(UInt64(bitPattern: Int64(sample.y)))
                hash.add(UInt64(bitPattern: Int64(sample.z)))
            }
        // Every other reading is stored in a table of its own kind, whose origins only meet
        // each other: its raw value (below) names it.
        default: hash.add(byte: 0xFE)
        }
        hash.add(UInt64(bitPattern: Int64(seq)))
        if let stamp = message.timestamp {
            hash.add(byte: 1)
            hash.add(UInt64(bitPattern: Int64((stamp.timeIntervalSince1970 * 1000).rounded())))
        } else {
            hash.add(byte: 0)
        }
        hash.add(UInt64(message.raw.count))
        for byte in message.raw { hash.add(byte: byte) }
        return Int64(bitPattern: hash.value)
    }

    private struct FNV1a {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func add(byte: UInt8) {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01B3
        }

        mutating func add(_ word: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { add(byte: UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
    }
}
