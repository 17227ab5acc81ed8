import PayServiceCore

extension HTTPRemoteTransport {
  /// The transport of a remote gateway from its settings: their timeouts and trust roots, a
  /// connection per concurrent call, a failure to connect retried.
  public static func gateway(_ settings: some RemoteGatewaySettings) -> HTTPRemoteTransport {
    var connection = RemoteConnectionSettings(
      connectTimeoutSeconds: settings.connectTimeoutSeconds, requestTimeoutSeconds: settings.requestTimeoutSeconds)
    if let roots = settings.trustRoots { connection.trustRoots = .file(roots) }
    connection.maxConnectionsPerHost = settings.maxConcurrentCalls
    connection.retriesConnecting = true
    do {
      return try HTTPRemoteTransport(connection)
    } catch {
      // Only PEM text or a client identity can fail to load, and a gateway's settings hold neither.
      preconditionFailure("\(error)")
    }
  }
}

extension RetryPolicy {
  /// How a remote gateway's calls are sent again: `maxRetries` times, after `Retry-After` or a
  /// backoff of a quarter of a second doubling up to 8 s, never past the request timeout.
  public static func gateway(_ settings: some RemoteGatewaySettings) -> RetryPolicy {
    RetryPolicy(maxRetries: settings.maxRetries, backoffSeconds: 0.25...8, maxDelaySeconds: settings.requestTimeoutSeconds)
  }
}
