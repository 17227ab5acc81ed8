/// Apple's push service for Wallet orders: one empty push to one device tells Wallet that an order
/// it follows changed, and Wallet then asks the orders web service for the new package
/// (`getWalletOrder`). The `PayServiceWallet` module sends them over HTTP/2 to APNs
/// (`APNsClient`); this core only says what a push is and what came of it, so that it builds
/// without SwiftNIO.
public protocol WalletPushService: Sendable {
  /// Sends one push with an empty payload to the device `pushToken` (the hex token Wallet gave
  /// `registerWalletDevice`), under the topic `topic` (the order type identifier). Never throws:
  /// a push that brought back no answer is `.unavailable`.
  func push(pushToken: String, topic: String) async -> WalletPushOutcome
  /// Closes the connections; later pushes are `.unavailable`. Idempotent.
  func shutdown()
}

/// What APNs answered to one push.
public enum WalletPushOutcome: Sendable, Equatable {
  /// 200: APNs took the push (its `apns-id`).
  case delivered(apnsId: String?)
  /// 410 `Unregistered` (or 400 `BadDeviceToken`, `DeviceTokenNotForTopic`): the token is no longer
  /// the device's for this topic; its registration goes, and no push is sent to it again.
  case gone(reason: String)
  /// Any other 4xx that sending again cannot mend (`BadTopic`, `InvalidProviderToken`,
  /// `TopicDisallowed`, ...): APNs' `reason`, for the operator. Not sent again. Status 0: the push
  /// token or the topic is not one, and nothing was sent (the reason says which, quoting neither).
  case refused(status: Int, reason: String)
  /// 429, 5xx, or no answer: the push may be sent again later; `retryAfterSeconds` when APNs said.
  case unavailable(reason: String, retryAfterSeconds: Int?)
}
