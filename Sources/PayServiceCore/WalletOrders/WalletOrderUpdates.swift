import Synchronization

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
    let created = RFC3339.format(now)
    for registration in try books.walletRegistrations(orderId: orderId)
    where registration.orderTypeIdentifier == wallet.orderTypeIdentifier {
      let call = WalletPush.Call(
        orderId: orderId, deviceLibraryIdentifier: registration.deviceLibraryIdentifier,
        pushToken: registration.pushToken, topic: wallet.orderTypeIdentifier, updatedAt: Int(time))
      let key = call.key
      let recorded = try books.insert(
        OperationRow(
          kind: WalletPush.kind, key: key, fingerprint: key, state: .pending, subject: orderId,
          request: JSONWriter.string(call), result: nil, created: created, settled: nil))
      if recorded { context.walletPushes?.note(key) }
    }
  }
}

/// One push to one device about one change of an order's package (kind `wallet_push`, keyed by
/// order, device and the package's new time). Recorded pending by `WalletOrderUpdates.changed`,
/// never prepared from a request; sent once, settled with what APNs answered. A device APNs says
/// is gone loses its registration.
public struct WalletPush: Operation {
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

  public static func lock(key: String, subject: String?, _ transaction: any StoreTransaction, context: ServiceContext)
    throws
  {
    try transaction.lockKey(kind, key)
  }

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

/// Pushes to APNs (`walletOrders.apns`) from the store's thread: each runs on a thread of its own
/// (`RemoteCallThread`), and the pushes this process recorded wait here until the transaction
/// that recorded them is durable.
public final class WalletPushCalls: Sendable {
  let service: any WalletPushService
  private let thread = RemoteCallThread(name: "payservice-apns")
  /// Keys of the pushes recorded by this process and not sent yet.
  private let recorded = Mutex<[String]>([])

  public init(service: any WalletPushService) {
    self.service = service
  }

  func note(_ key: String) {
    recorded.withLock { $0.append(key) }
  }

  func start(_ call: WalletPush.Call) -> PendingCall<WalletPushOutcome> {
    let service = self.service
    return thread.start(key: call.key) { await service.push(pushToken: call.pushToken, topic: call.topic) }
  }

  /// Sends the pushes recorded since the last time, each at most once, and records what APNs
  /// answered: for the executor, once the work that recorded them is durable. A key whose
  /// transaction was rolled back is not in the journal and is skipped; one settled meanwhile (by
  /// the sweep of another process) too. Throws when the store fails: the pushes stay pending in
  /// the journal, and the next start's sweep sends them.
  public func sendRecorded(context: ServiceContext) throws {
    // A transaction that ran again (a group commit's, an optimistic one's) noted its keys again.
    var seen = Set<String>()
    let keys = recorded.withLock { keys in
      defer { keys = [] }
      return keys
    }.filter { seen.insert($0).inserted }
    guard !keys.isEmpty else { return }
    let now = context.clock.now()
    let entries = try context.store.write { transaction in
      try keys.compactMap { try transaction.operation(kind: WalletPush.kind, key: $0) }
    }
    let resumed = try entries.filter { $0.state == .pending }.compactMap {
      try WalletPush.resume($0, now: now, context: context)
    }
    try OperationRunner.complete(resumed)
  }

  public func shutdown() {
    service.shutdown()
  }
}
