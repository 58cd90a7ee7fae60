import CMosquitto

// libmosquitto calls these on the network thread. They are plain C functions (no captured
// context: the client comes back from `userdata`), copy what they need, and never block.

func mosquittoOnConnect(_: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ rc: Int32, _: Int32, _ properties: OpaquePointer?) {
    var receiveMaximum: UInt16 = 0
    let found = mosquitto_property_read_int16(properties, Int32(MQTT_PROP_RECEIVE_MAXIMUM.rawValue), &receiveMaximum, false) != nil
    client(from: userdata)?.didConnect(returnCode: rc, receiveMaximum: found ? Int(receiveMaximum) : nil)
}

func mosquittoOnDisconnect(_: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ rc: Int32, _: OpaquePointer?) {
    client(from: userdata)?.didDisconnect(returnCode: rc)
}

func mosquittoOnPublish(_: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ mid: Int32, _ reasonCode: Int32, _: OpaquePointer?) {
    client(from: userdata)?.didPublish(mid: mid, reasonCode: reasonCode)
}

func mosquittoOnMessage(
    _: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ message: UnsafePointer<mosquitto_message>?, _ properties: OpaquePointer?
) {
    guard let client = client(from: userdata), let message = message?.pointee, let topic = message.topic else { return }
    let payload: [UInt8] =
        message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
    client.didReceive(
        MQTTIncomingMessage(
            topic: String(cString: topic), payload: payload, qos: Int(message.qos), retain: message.retain,
            properties: MosquittoProperties.read(properties)))
}

func mosquittoOnLog(_: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ level: Int32, _ text: UnsafePointer<CChar>?) {
    guard let text else { return }
    client(from: userdata)?.didLog(level: level, text: String(cString: text))
}

private func client(from userdata: UnsafeMutableRawPointer?) -> MQTTClient? {
    guard let userdata else { return nil }
    return Unmanaged<MQTTClient>.fromOpaque(userdata).takeUnretainedValue()
}
