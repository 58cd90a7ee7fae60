import Bus

/// A per-date request as it arrived: parsed, where its one reply goes, and with what correlation
/// data and QoS. Shared by the agent's `QueryService` and the fleet archive's queries.
struct IncomingQuery {
    let parsed: Result<QueryRequest, QueryError>
    let route: ReplyRouting.Route
    let correlation: [UInt8]?
    let qos: MQTTQoS

    init(_ message: MQTTIncomingMessage, routing: ReplyRouting) {
        correlation = message.properties.correlationData
        qos = QueryService.replyQoS(forRequestQoS: message.qos)
        parsed = QueryRequest.parse(message.payload)
        let replyTo: String? =
            switch parsed {
            case .success(let request): request.replyTo
            case .failure: QueryRequest.replyTo(in: message.payload)
            }
        route = routing.route(responseTopic: message.properties.responseTopic, replyTo: replyTo)
    }
}
