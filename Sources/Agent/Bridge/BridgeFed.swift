import SensorBridge
import Store

/// A sample kind that a sensor bridge's messages make: how a parsed reading becomes its stored
/// row. `BridgeService` stamps every message and handles heart rate and the accelerometer itself
/// (one sets the strap's state, the other is counted in windows); every other reading goes to
/// the kind that takes it, so a new characteristic needs no change there.
protocol BridgeFed: SampleKind {
    /// The characteristic it stores that the bridge parser does not read itself, decoded (and
    /// refused with the reason when bad) as each line is parsed; nil for one it does (RSC).
    static var forwarded: (any ForwardedCharacteristic.Type)? { get }

    /// The row `message` makes, stamped `timeMs` (with `origin` when that is its receive time);
    /// nil when the message is not of this kind.
    static func row(of message: BridgeMessage, timeMs: Int64, receivedMs: Int64, origin: Int64?) -> Row?
}

extension StepRecordKind: BridgeFed {
    static var forwarded: (any ForwardedCharacteristic.Type)? { nil }

    /// A foot pod's RSC Measurement (0x2A53), stored as received and decoded when read.
    static func row(of message: BridgeMessage, timeMs: Int64, receivedMs: Int64, origin: Int64?) -> StoredStepRecord? {
        guard case .runningSpeedCadence = message.reading else { return nil }
        return StoredStepRecord(sensor: message.sensor, timeMs: timeMs, receivedMs: receivedMs, rsc: message.raw, origin: origin)
    }
}

enum BridgeFedKinds {
    static let all: [any BridgeFed.Type] = SampleKinds.all.compactMap { $0 as? any BridgeFed.Type }
    /// What `BridgeMessage.parse` is given to read.
    static let forwarded: [any ForwardedCharacteristic.Type] = all.compactMap { $0.forwarded }

    /// Adds the row `message` makes to `rows`; false when no kind takes it.
    static func add(_ message: BridgeMessage, timeMs: Int64, receivedMs: Int64, origin: Int64?, to rows: inout SampleBatch) -> Bool {
        all.contains { add($0, message, timeMs: timeMs, receivedMs: receivedMs, origin: origin, to: &rows) }
    }

    private static func add<Kind: BridgeFed>(
        _ kind: Kind.Type, _ message: BridgeMessage, timeMs: Int64, receivedMs: Int64, origin: Int64?, to rows: inout SampleBatch
    ) -> Bool {
        guard let row = Kind.row(of: message, timeMs: timeMs, receivedMs: receivedMs, origin: origin) else { return false }
        rows[kind].append(row)
        return true
    }
}
