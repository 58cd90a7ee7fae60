import Bus

/// A per-date request as it arrived: parsed, where its one reply goes, and with what correlation
/// data and QoS. Shared by the agent's `QueryService` and the fleet archive's queries.
package struct IncomingQuery {
    package let parsed: Result<QueryRequest, QueryError>
    package let route: ReplyRouting.Route
    package let correlation: [UInt8]?
    package let qos: MQTTQoS

    package init(_ message: MQTTIncomingMessage, routing: ReplyRouting) {
        correlation = message.properties.correlationData
        qos = ReplyRouting.replyQoS(forRequestQoS: message.qos)
        parsed = QueryRequest.parse(message.payload)
        let replyTo: String? =
            switch parsed {
            case .success(let request): request.replyTo
            case .failure: QueryRequest.replyTo(in: message.payload)
            }
        route = routing.route(responseTopic: message.properties.responseTopic, replyTo: replyTo)
    }
}
