/// The merchant session client as the serve loop uses it: a request blocks the loop for at most
/// the configured timeouts (connect plus request), on a thread of its own (`RemoteCallThread`).
/// The sheet waits for this one answer before it can show anything, and Apple's validation URL is
/// single use, so nothing is retried.
public final class MerchantSessionCalls: Sendable {
  let client: any MerchantSessionClient
  private let thread = RemoteCallThread(name: "payservice-merchant-session")

  public init(client: any MerchantSessionClient) {
    self.client = client
  }

  /// Posts `body` to `endpoint` and waits for the reply.
  func start(_ endpoint: MerchantSessionEndpoint, body: [UInt8]) -> MerchantSessionReply {
    let client = self.client
    return thread.run { await client.startSession(endpoint, body: body) }
  }

  /// Closes the client's connections.
  public func shutdown() {
    client.shutdown()
  }
}
