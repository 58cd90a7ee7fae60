import Testing

@testable import Bus

/// libmosquitto's result codes, named once at the wrapper (no broker needed: the codes and
/// messages are libmosquitto's own, from the linked library).
@Suite("libmosquitto result codes")
struct MosquittoErrorTests {
    @Test("MOSQ_ERR_NO_CONN is the noConnection kind")
    func noConnectionKind() {
        #expect(MosquittoError.failure(4)?.kind == .noConnection)
    }

    @Test("an error carries the C name of its code")
    func cName() {
        #expect(MosquittoError.failure(4)?.name == "MOSQ_ERR_NO_CONN")
    }

    @Test("an error carries libmosquitto's own message")
    func message() {
        #expect(MosquittoError.failure(4)?.message == "The client is not currently connected.")
    }

    @Test("MOSQ_ERR_SUCCESS is no error")
    func success() {
        #expect(MosquittoError.failure(0) == nil)
    }

    @Test("a code this wrapper does not know keeps its number in its name")
    func unknownCode() {
        #expect(MosquittoError.failure(999)?.name == "MOSQ_ERR_999")
    }

    @Test("a refused publish reads as libmosquitto's message")
    func publishFailedDescription() {
        let error = MosquittoError(code: 9)
        #expect(MQTTError.publishFailed(error).description == "publish failed: \(error.message)")
    }
}
