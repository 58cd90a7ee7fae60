import Foundation
import CMosquitto

/// Conversions between `MQTTProperties` and libmosquitto's property lists.
enum MosquittoProperties {
    /// Builds a property list for PUBLISH; the caller frees it with `mosquitto_property_free_all`.
    static func make(_ properties: MQTTProperties) -> OpaquePointer? {
        var list: OpaquePointer? = nil
        if let contentType = properties.contentType {
            mosquitto_property_add_string(&list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), contentType)
        }
        if properties.payloadIsUTF8 {
            mosquitto_property_add_byte(&list, Int32(MQTT_PROP_PAYLOAD_FORMAT_INDICATOR.rawValue), 1)
        }
        if let responseTopic = properties.responseTopic {
            mosquitto_property_add_string(&list, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), responseTopic)
        }
        if let data = properties.correlationData {
            data.withUnsafeBytes { bytes in
                _ = mosquitto_property_add_binary(
                    &list, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), bytes.baseAddress, UInt16(clamping: bytes.count))
            }
        }
        for (name, value) in properties.userProperties {
            mosquitto_property_add_string_pair(&list, Int32(MQTT_PROP_USER_PROPERTY.rawValue), name, value)
        }
        if let expiry = properties.messageExpiryS {
            mosquitto_property_add_int32(&list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry)
        }
        return list
    }

    /// Copies what the agent cares about out of a received list; libmosquitto's copies are freed here.
    static func read(_ list: OpaquePointer?) -> MQTTProperties {
        var result = MQTTProperties()
        var property: OpaquePointer? = list
        while let current = property {
            switch UInt32(mosquitto_property_identifier(current)) {
            case MQTT_PROP_CONTENT_TYPE.rawValue:
                result.contentType = readString(current)
            case MQTT_PROP_PAYLOAD_FORMAT_INDICATOR.rawValue:
                var byte: UInt8 = 0
                mosquitto_property_read_byte(current, Int32(MQTT_PROP_PAYLOAD_FORMAT_INDICATOR.rawValue), &byte, false)
                result.payloadIsUTF8 = byte == 1
            case MQTT_PROP_RESPONSE_TOPIC.rawValue:
                result.responseTopic = readString(current)
            case MQTT_PROP_CORRELATION_DATA.rawValue:
                var value: UnsafeMutableRawPointer? = nil
                var length: UInt16 = 0
                mosquitto_property_read_binary(current, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), &value, &length, false)
                if let value {
                    result.correlationData = Array(UnsafeRawBufferPointer(start: value, count: Int(length)))
                    free(value)
                } else {
                    result.correlationData = []
                }
            case MQTT_PROP_USER_PROPERTY.rawValue:
                var name: UnsafeMutablePointer<CChar>? = nil
                var value: UnsafeMutablePointer<CChar>? = nil
                mosquitto_property_read_string_pair(current, Int32(MQTT_PROP_USER_PROPERTY.rawValue), &name, &value, false)
                if let name, let value { result.userProperties.append((String(cString: name), String(cString: value))) }
                free(name)
                free(value)
            case MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue:
                var value: UInt32 = 0
                mosquitto_property_read_int32(current, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), &value, false)
                result.messageExpiryS = value
            default:
                break
            }
            property = mosquitto_property_next(current)
        }
        return result
    }

    private static func readString(_ property: OpaquePointer) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        mosquitto_property_read_string(property, mosquitto_property_identifier(property), &value, false)
        guard let value else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}

