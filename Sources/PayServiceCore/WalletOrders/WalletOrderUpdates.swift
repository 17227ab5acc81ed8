/// What keeps Wallet's copy of an order current: every change to an order's package (a capture,
/// cancel, refund, dispute or shipment) moves the package's time forward and records a push to
/// each device registered for the order, in the change's own transaction, so that the change and
/// its pushes are durable together. The pushes are sent once that transaction is (`WalletPushCalls.sendRecorded`),
/// and a push a crash left unsent is sent by the sweep at the next start: none is lost, and a push
/// is sent at most once more than it should be.
public enum WalletOrderUpdates {
  /// The order's package changed at `now`: its time becomes the later of `now` and a second after
  /// its last change (so that it only ever increases, and Wallet's If-Modified-Since sees every
  /// change), and one push per registered device is recorded, pending. Nothing when payservice
  /// serves no packages, or the order was placed without Wallet order tracking.
  public static func changed(_ orderId: String, _ transaction: any OrderTransaction, context: ServiceContext, now: Int64)
    throws
  {
    guard let wallet = context.config.walletOrders, wallet.package != nil else { return }
    let books = try transaction.locked()
    guard let order = try books.walletOrder(orderId), order.authenticationToken != nil else { return }
    let time = max(now, order.lastModified + 1)
    try books.setWalletUpdatedAt(orderId, to: time)
    guard wallet.apns != nil else { return }
    for registration in try books.walletRegistrations(orderId: orderId)
    where registration.orderTypeIdentifier == wallet.orderTypeIdentifier {
      let call = WalletPush.Call(
        orderId: orderId, deviceLibraryIdentifier: registration.deviceLibraryIdentifier,
        pushToken: registration.pushToken, topic: wallet.orderTypeIdentifier, updatedAt: Int(time))
      try context.recordedCalls.record(WalletPush.self, call, key: call.key, subject: orderId, books, now: now)
    }
  }
}

/// One push to one device about one change of an order's package (kind `wallet_push`, keyed by
/// order, device and the package's new time). Recorded pending by `WalletOrderUpdates.changed`,
/// never prepared from a request; sent once, settled with what APNs answered. A device APNs says
/// is gone loses its registration.
public struct WalletPush: RecordedOperation {
  public static let kind = "wallet_push"

  public struct Call: Sendable, WireObject {
    public var orderId = ""
    public var deviceLibraryIdentifier = ""
    public var pushToken = ""
    public var topic = ""
    public var updatedAt = 0

    public var key: String { "\(orderId)/\(deviceLibraryIdentifier)/\(updatedAt)" }

    public static let shape = ObjectShape<Call>(
      blank: { Call() },
      [
        .member("orderId", \.orderId), .member("deviceLibraryIdentifier", \.deviceLibraryIdentifier),
        .member("pushToken", \.pushToken), .member("topic", \.topic), .member("updatedAt", \.updatedAt),
      ])
  }

  /// What came of the push, as the journal keeps it.
  public struct Result: Sendable, Equatable, WireObject {
    /// `delivered`, `gone`, `refused` or `unavailable`; `not_sent` when it was never sent.
    public var outcome = ""
    public var reason: String?

    public static let shape = ObjectShape<Result>(
      blank: { Result() }, [.member("outcome", \.outcome), .member("reason", \.reason, .optional)])
  }

  public typealias Reply = WalletPushOutcome

  public let call: Call
  public var key: String { call.key }
  public var subject: String? { call.orderId }
  public var fingerprint: String { call.key }
  public var conflict: ServiceError { .idempotencyKeyConflict("wallet push") }

  /// Pushes are recorded by the change that calls for them, never prepared from a request.
  public func prepare(_ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext, now: Int64) throws
    -> Preparation<Result, Call>
  {
    .done(Result(outcome: "not_sent", reason: "a push is recorded by the change it announces"), final: false)
  }

  public static func sender(_ context: ServiceContext) -> (@Sendable (Call) -> PendingCall<Reply>)? {
    guard let pushes = context.walletPushes else { return nil }
    return { call in pushes.start(call) }
  }

  public static func settle(
    _ call: Call, reply: Reply, _ subject: Void, _ transaction: any StoreTransaction, context: ServiceContext,
    now: Int64
  ) throws -> Settlement<Result> {
    switch reply {
    case .delivered:
      return .settled(Result(outcome: "delivered"))
    case .gone(let reason):
      // The device's registration goes only if it still holds the token APNs refused: a device
      // that registered again meanwhile gave a new one.
      let registrations = try transaction.walletRegistrations(orderId: call.orderId)
      if registrations.contains(where: {
        $0.deviceLibraryIdentifier == call.deviceLibraryIdentifier && $0.orderTypeIdentifier == call.topic
          && $0.pushToken == call.pushToken
      }) {
        _ = try transaction.deleteWalletRegistration(
          deviceLibraryIdentifier: call.deviceLibraryIdentifier, orderTypeIdentifier: call.topic, orderId: call.orderId)
      }
      return .settled(Result(outcome: "gone", reason: reason))
    case .refused(let status, let reason):
      return .settled(Result(outcome: "refused", reason: "\(status) \(reason)"))
    case .unavailable(let reason, _):
      return .pending(Result(outcome: "unavailable", reason: reason))
    }
  }

  public static func unsent(_ call: Call, because reason: UnsentReason, context: ServiceContext) throws -> Result {
    Result(outcome: "not_sent", reason: reason == .tooOld ? "older than three days" : "no APNs configured")
  }

  /// A push days late tells Wallet nothing it has not fetched meanwhile.
  public static var maxResendAgeSeconds: Int64 { 3 * 86_400 }
}

/// Pushes to APNs (`walletOrders.apns`), each on a thread of its own (`RemoteCallThread`).
public final class WalletPushCalls: Sendable {
  let service: any WalletPushService
  private let thread = RemoteCallThread(name: "payservice-apns")

  public init(service: any WalletPushService) {
    self.service = service
  }

  func start(_ call: WalletPush.Call) -> PendingCall<WalletPushOutcome> {
    let service = self.service
    return thread.start(key: call.key) { await service.push(pushToken: call.pushToken, topic: call.topic) }
  }

  public func shutdown() {
    service.shutdown()
  }
}
