import Foundation
import PayServiceCore
import PayServiceTestSupport
import Testing

/// A subscription's notifications, in order, shuffled and repeated: the same entitlements.
@Suite("App Store subscriptions")
struct AppStoreSubscriptionTests {
  static let account = "0f2c4d5e-6a7b-4c8d-9e0f-1a2b3c4d5e6f"
  static let pro = "com.example.beans.pro.monthly"
  static let original = "3000000000000001"

  static func ms(_ text: String) -> Int { AppStoreShop.ms(text) }

  /// A year's story of one subscription as Apple tells it: subscribed, renewed, failed to renew
  /// into a grace period, recovered, auto-renew turned off, refunded, the refund reversed.
  static func story(_ shop: AppStoreShop) throws -> [String] {
    func period(_ id: String, _ start: String, _ end: String, signed: String, revocation: String? = nil) throws
      -> String
    {
      try shop.transaction(
        id: id, original: original, product: pro, purchase: ms(start), expires: ms(end), signed: ms(signed),
        revocation: revocation.map(ms), revocationReason: revocation == nil ? nil : 1, appAccountToken: account)
    }
    func renewal(signed: String, autoRenew: Bool = true, retry: Bool? = nil, grace: String? = nil) throws -> String {
      try shop.renewal(
        original: original, autoRenew: autoRenew, signed: ms(signed), billingRetry: retry, graceUntil: grace.map(ms))
    }
    var uuid = 0
    func note(_ type: String, _ subtype: String?, _ signed: String, _ transaction: String, _ renewal: String) throws
      -> String
    {
      uuid += 1
      return try shop.notification(
        uuid: String(format: "00000000-0000-4000-8000-%012d", uuid), type: type, subtype: subtype, signed: ms(signed),
        transaction: transaction, renewal: renewal)
    }
    let first = try period("3000000000000001", "2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z", signed: "2027-01-01T00:00:05Z")
    let second = try period("3000000000000002", "2027-02-01T00:00:00Z", "2027-03-01T00:00:00Z", signed: "2027-02-01T00:00:05Z")
    let failed = try period("3000000000000002", "2027-02-01T00:00:00Z", "2027-03-01T00:00:00Z", signed: "2027-03-01T00:00:05Z")
    let third = try period("3000000000000003", "2027-03-03T00:00:00Z", "2027-04-03T00:00:00Z", signed: "2027-03-03T00:00:05Z")
    let turnedOff = try period("3000000000000003", "2027-03-03T00:00:00Z", "2027-04-03T00:00:00Z", signed: "2027-03-10T00:00:00Z")
    let refunded = try period(
      "3000000000000003", "2027-03-03T00:00:00Z", "2027-04-03T00:00:00Z", signed: "2027-03-15T00:00:00Z",
      revocation: "2027-03-15T00:00:00Z")
    let reversed = try period("3000000000000003", "2027-03-03T00:00:00Z", "2027-04-03T00:00:00Z", signed: "2027-03-20T00:00:00Z")
    return [
      try note("SUBSCRIBED", "INITIAL_BUY", "2027-01-01T00:00:05Z", first, try renewal(signed: "2027-01-01T00:00:05Z")),
      try note("DID_RENEW", nil, "2027-02-01T00:00:05Z", second, try renewal(signed: "2027-02-01T00:00:05Z")),
      try note(
        "DID_FAIL_TO_RENEW", "GRACE_PERIOD", "2027-03-01T00:00:05Z", failed,
        try renewal(signed: "2027-03-01T00:00:05Z", retry: true, grace: "2027-03-07T00:00:00Z")),
      try note(
        "DID_RENEW", "BILLING_RECOVERY", "2027-03-03T00:00:05Z", third,
        try renewal(signed: "2027-03-03T00:00:05Z", retry: false)),
      try note(
        "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", "2027-03-10T00:00:00Z", turnedOff,
        try renewal(signed: "2027-03-10T00:00:00Z", autoRenew: false)),
      try note("REFUND", nil, "2027-03-15T00:00:00Z", refunded, try renewal(signed: "2027-03-15T00:00:00Z", autoRenew: false)),
      try note(
        "REFUND_REVERSED", nil, "2027-03-20T00:00:00Z", reversed,
        try renewal(signed: "2027-03-20T00:00:00Z", autoRenew: false)),
    ]
  }

  static func process(_ notifications: [String], _ context: ServiceContext) throws -> [String] {
    try notifications.map {
      try AppStoreLedgerTests.call(
        ProcessAppStoreNotification.self, #"{"signedPayload":\#(JSONWriter.string($0))}"#, context)
    }
  }

  static func entitlements(_ context: ServiceContext, at time: String) throws -> String {
    try AppStoreLedgerTests.call(
      GetEntitlements.self, #"{"originalTransactionId":"\#(original)"}"#, AppStoreLedgerTests.at(context, time))
  }

  static let checkpoints = [
    "2027-01-15T00:00:00Z", "2027-03-02T00:00:00Z", "2027-03-08T00:00:00Z", "2027-03-12T00:00:00Z",
    "2027-04-10T00:00:00Z",
  ]

  @Test("in order: granted, extended, grace period, recovered, renewal off, revoked, restored", arguments: StoreBackend.available)
  func inOrder(_ backend: StoreBackend) throws {
    let shop = try AppStoreShop()
    let notifications = try Self.story(shop)
    // Each notification heard as it came, with the clock at its own time.
    let times = [
      "2027-01-01T00:01:00Z", "2027-02-01T00:01:00Z", "2027-03-01T00:01:00Z", "2027-03-03T00:01:00Z",
      "2027-03-10T00:01:00Z", "2027-03-15T00:01:00Z", "2027-03-20T00:01:00Z",
    ]
    let context = try TestConfig.context(config: shop.config(), backend: backend, backOffice: true)
    var effects: [String] = []
    var states: [String] = []
    for (notification, time) in zip(notifications, times) {
      let at = AppStoreLedgerTests.at(context, time)
      let answer = try Self.process([notification], at)[0]
      effects.append(String(answer.split(separator: "\"effect\":\"")[1].prefix { $0 != "\"" }))
      let state = try Self.entitlements(context, at: time)
      states.append(String(state.split(separator: "\"status\":\"")[1].prefix { $0 != "\"" }))
    }
    #expect(effects == ["granted", "extended", "updated", "extended", "updated", "revoked", "restored"])
    #expect(states == ["active", "active", "grace_period", "active", "active", "revoked", "active"])
    #expect(
      try Self.entitlements(context, at: "2027-03-21T00:00:00Z")
        == #"{"account":"0f2c4d5e-6a7b-4c8d-9e0f-1a2b3c4d5e6f","asOf":"2027-03-21T00:00:00Z","entitlements":[{"entitlement":"pro","status":"active","active":true,"productId":"com.example.beans.pro.monthly","type":"autoRenewable","originalTransactionId":"3000000000000001","transactionId":"3000000000000003","expiresDate":"2027-04-03T00:00:00Z","autoRenew":false}],"balances":[]}"#
    )
    #expect(try Self.entitlements(context, at: "2027-04-10T00:00:00Z").contains(#""status":"expired","active":false"#))
    // Heard again, every notification answers as the first time.
    let again = try Self.process(notifications, AppStoreLedgerTests.at(context, "2027-05-01T00:00:00Z"))
    #expect(again.map { String($0.split(separator: "\"effect\":\"")[1].prefix { $0 != "\"" }) } == effects)
  }

  @Test("shuffled and repeated, the story ends in the same entitlements (property, 24 orders)", arguments: StoreBackend.available)
  func shuffled(_ backend: StoreBackend) throws {
    let shop = try AppStoreShop()
    let notifications = try Self.story(shop)
    let reference = try TestConfig.context(config: shop.config(), backend: backend, backOffice: true)
    _ = try Self.process(notifications, reference)
    let expected = try Self.checkpoints.map { try Self.entitlements(reference, at: $0) }
    var random = SplitMix64(seed: 37)
    let runs = backend == .sqlite ? 24 : 6
    var staleSeen = 0
    for _ in 0..<runs {
      var delivery = notifications + (0..<3).map { _ in notifications[Int(random.next() % UInt64(notifications.count))] }
      delivery.shuffle(using: &random)
      let context = try TestConfig.context(config: shop.config(), backend: backend, backOffice: true)
      let answers = try Self.process(delivery, context)
      staleSeen += answers.filter { $0.contains(#""effect":"stale""#) }.count
      #expect(try Self.checkpoints.map { try Self.entitlements(context, at: $0) } == expected)
    }
    // The shuffles did deliver older items after newer ones.
    #expect(staleSeen > 0)
  }
}
