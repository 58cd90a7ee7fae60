import Foundation

/// One-shot real MQTT clients: mosquitto_pub and mosquitto_rr.
public enum MQTTTools {
    /// Publishes one message with mosquitto_pub (QoS 1) and waits for it to finish.
    public static func publish(port: Int, topic: String, message: String, retain: Bool = false, extraArguments: [String] = [])
        async throws
    {
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-m", message, "-q", "1", "-V", "5"]
        if retain { arguments.append("-r") }
        let process = try ManagedProcess(name: "mosquitto_pub", executable: Tools.mosquittoPub, arguments: arguments + extraArguments)
        let status = await process.waitForExit(timeout: 10)
        guard status == 0 else { throw WaitTimeout(description: "mosquitto_pub failed (\(String(describing: status))): \(process.text)") }
    }

    /// Sends a request with mosquitto_rr and returns the reply it printed (or throws).
    public static func request(port: Int, topic: String, message: String, responseTopic: String = "reply/test",
                               extraArguments: [String] = [], timeout: Int = 5) async throws -> String {
        let arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-V", "5", "-t", topic, "-e", responseTopic, "-m", message,
                         "-W", "\(timeout)"] + extraArguments
        let process = try ManagedProcess(name: "mosquitto_rr", executable: Tools.mosquittoRR, arguments: arguments)
        let status = await process.waitForExit(timeout: Double(timeout) + 5)
        guard status == 0 else { throw WaitTimeout(description: "mosquitto_rr got no reply (\(String(describing: status))): \(process.text)") }
        return process.text
    }
}
