/// The merchant session client as the serve loop uses it: a request blocks the loop for at most
/// the configured timeouts (connect plus request), on a thread of its own so that the client's
/// event loop never waits for the server thread. The sheet waits for this one answer before it
/// can show anything, and Apple's validation URL is single use, so nothing is retried.
public final class MerchantSessionCalls: Sendable {
  let client: any MerchantSessionClient
  private let executor = TaskThread(name: "payservice-merchant-session")

  public init(client: any MerchantSessionClient) {
    self.client = client
  }

  deinit {
    executor.stop()
  }

  /// Posts `body` to `endpoint` and waits for the reply.
  func start(_ endpoint: MerchantSessionEndpoint, body: [UInt8]) -> MerchantSessionReply {
    let client = self.client
    return Awaited(on: executor) { await client.startSession(endpoint, body: body) }.wait()
  }

  /// Closes the client's connections.
  public func shutdown() {
    client.shutdown()
  }
}
