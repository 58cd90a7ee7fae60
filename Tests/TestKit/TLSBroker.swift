extension MosquittoBroker {
    /// A broker whose listener speaks TLS only, with `certificates`' server certificate; that asks
    /// for a client certificate from the same CA when `requireClientCertificate`; that logs clients
    /// in from `passwordFile` (no anonymous access) when given one.
    public static func tls(
        _ certificates: TestCertificates, requireClientCertificate: Bool = false, passwordFile: String? = nil, extraConfig: String = ""
    ) throws -> MosquittoBroker {
        try MosquittoBroker(extraConfig: """
            cafile \(certificates.caFile)
            certfile \(certificates.certFile)
            keyfile \(certificates.keyFile)
            \(requireClientCertificate ? "require_certificate true" : "")
            \(passwordFile.map { "password_file \($0)" } ?? "")
            \(extraConfig)
            """)
    }
}
