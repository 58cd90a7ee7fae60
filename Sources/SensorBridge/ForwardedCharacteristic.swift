/// A GATT characteristic that a sample kind declares it stores: the bridge forwards its value
/// unchanged (`"char"` and `"raw"`, docs/contract.md) and this type decodes it by its own
/// published rules. `BridgeMessage.parse` is given the ones the agent's kinds read, so a new
/// characteristic is its decoder's file and the kind that names it, not a case here.
///
/// Heart rate (0x2A37), RSC (0x2A53) and the accelerometer batches are read by `BridgeMessage`
/// itself: the bridge's state and the step counting follow them as they arrive.
public protocol ForwardedCharacteristic: Sendable, Equatable {
    /// The bridge's `"char"`, lower case: `"2a5b"`.
    static var char: String { get }
    associatedtype Rejection: Error, CustomStringConvertible
    /// The value decoded, or why it cannot be.
    static func parse(_ bytes: [UInt8]) -> Result<Self, Rejection>
}

extension ForwardedCharacteristic {
    /// How a rejection names it: `"0x2A5B"`.
    static var label: String { "0x" + char.uppercased() }

    /// `bytes` as a bridge message's reading; a bad value is rejected naming the characteristic.
    static func reading(_ bytes: [UInt8]) -> Result<BridgeMessage.Reading, BridgeMessage.Rejection> {
        switch parse(bytes) {
        case .success(let value): .success(.forwarded(value))
        case .failure(let reason): .failure(.badValue(label, "\(reason)"))
        }
    }

    func isEqual(to other: any ForwardedCharacteristic) -> Bool { (other as? Self) == self }
}
