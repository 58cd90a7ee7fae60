/// Why a request got no data: one reply with `{"ok":false,"error":{…}}` and a v5 user property
/// `status` in HTTP terms.
package struct QueryError: Error, Equatable, Sendable {
    package enum Code: String, Sendable {
        case invalidDate = "invalid_date"
        case futureDate = "future_date"
        case badRequest = "bad_request"
        case tooLarge = "too_large"
        case rateLimited = "rate_limited"
        case forbiddenTopic = "forbidden_topic"
        /// Commands only (`cmd/workout`, `cmd/gear`): no such workout or pair; the state does not allow it.
        case notFound = "not_found"
        case conflict
        case `internal`
    }

    package var code: Code
    package var message: String

    package init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    var status: Int {
        switch code {
        case .invalidDate, .futureDate, .badRequest: 400
        case .forbiddenTopic: 403
        case .notFound: 404
        case .conflict: 409
        case .tooLarge: 413
        case .rateLimited: 429
        case .internal: 500
        }
    }

    package var reply: QueryReply {
        QueryReply(
            body: JSONValue.object([
                ("ok", false), ("error", .object([("code", .string(code.rawValue)), ("message", .string(message))])),
            ]).bytes,
            contentType: QueryReply.json, status: status)
    }
}

/// A reply's bytes, MQTT content type and status.
package struct QueryReply: Sendable, Equatable {
    package static let json = "application/json"
    static let geoJSON = "application/geo+json"
    static let gpx = "application/gpx+xml"

    package var body: [UInt8]
    package var contentType: String
    package var status: Int

    package init(body: [UInt8], contentType: String, status: Int) {
        self.body = body
        self.contentType = contentType
        self.status = status
    }
}
