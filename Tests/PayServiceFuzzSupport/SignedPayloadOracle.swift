// The fuzz harness's `signed` target (Fuzz/Sources): inputs are the claims of signed items, which the harness signs properly (the
// App Store test authority's chain, the Stripe test secret) before sending them, so that the
// fuzzer's mutations reach what runs after a signature verifies: dates, amounts, ids, environments
// and nesting chosen by an attacker who holds a valid signer or replays a real one.
import Foundation
import PayServiceCore

/// Signs each input's claims and answers the request in process, with the `requests` target's
/// oracle (one valid JSON-RPC answer, no trap).
///
/// An input is a kind on its first line (`transaction`, `renewal`, `notification`, `stripe`) and
/// the claims, JSON text, on the rest. App Store claims are signed as a compact JWS by the test
/// authority (whose root the config trusts); in a notification, `data.signedTransactionInfo` and
/// `data.signedRenewalInfo` given as objects are signed as items first. Stripe claims are the
/// event's body, signed with the webhook secret at the pinned clock. Claims that are not JSON are
/// signed as they are.
public final class SignedPayloadOracle {
  public static let webhookSecret = "whsec_payservice_fuzz"
  let shop: AppStoreShop
  let handler: RequestHandler

  public init() throws {
    shop = try AppStoreShop()
    let config = shop.config()
    let store = try SQLiteStore(path: ":memory:", newIdentifierKey: TestConfig.identifierKey)
    try store.seedStock(config.catalog)
    let gateway = GatewayCalls(gateway: SilentGateway(), maxConcurrent: 1, webhookSecrets: [Self.webhookSecret])
    handler = TestConfig.handler(
      ServiceContext(config: config, store: store, clock: ServiceClock(pinned: TestConfig.now), gateway: gateway))
  }

  public func check(_ input: [UInt8]) -> String? {
    guard let line = request(input) else { return nil }
    let answer = Array(line.utf8).withUnsafeBytes { handler.handle(line: $0) }
    let output = answer.map { $0 + [UInt8(ascii: "\n")] } ?? []
    return FuzzOracle.verify(input: Array(line.utf8) + [UInt8(ascii: "\n")], output: output)
  }

  /// The request line `input` stands for; nil when its kind is none of the four.
  public func request(_ input: [UInt8]) -> String? {
    let split = input.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
    let kind = String(decoding: split[0], as: UTF8.self)
    let claims = split.count > 1 ? String(decoding: split[1], as: UTF8.self) : ""
    let (method, params): (String, String)
    switch kind {
    case "transaction", "renewal":
      (method, params) = ("verifyAppStoreTransaction", #"{"signedTransaction":\#(JSONWriter.string(sign(claims)))}"#)
    case "notification":
      (method, params) = ("processAppStoreNotification", #"{"signedPayload":\#(JSONWriter.string(sign(claims, nested: true)))}"#)
    case "stripe":
      let header = StripeWebhookSignature.header(payload: claims, secret: Self.webhookSecret, timestamp: TestConfig.now)
      (method, params) = ("processStripeEvent", #"{"payload":\#(JSONWriter.string(claims)),"signature":"\#(header)"}"#)
    default:
      return nil
    }
    return #"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":\#(params)}"#
  }

  /// `claims` as the App Store would sign them; with `nested`, the items inside first.
  func sign(_ claims: String, nested: Bool = false) -> String {
    var text = claims
    if nested, case .object(var payload)? = try? JSONParser.parse(claims) {
      for (index, member) in payload.members.enumerated() where member.key == "data" {
        guard case .object(var data) = member.value else { continue }
        for (inner, item) in data.members.enumerated()
        where ["signedTransactionInfo", "signedRenewalInfo"].contains(item.key) {
          if case .object = item.value { data.members[inner].value = .string(sign(JSONWriter.string(item.value))) }
        }
        payload.members[index].value = .object(data)
      }
      text = JSONWriter.string(JSONValue.object(payload))
    }
    do {
      return try shop.authority.sign(text)
    } catch {
      preconditionFailure("the test authority cannot sign: \(error)")
    }
  }
}

/// A gateway that never answers: events are verified and recorded without a network.
public struct SilentGateway: RemoteGateway {
  public init() {}
  public var name: String { "Stripe" }
  public func paymentDataProblem(_ paymentData: String) -> String? { nil }
  public func charge(_ request: GatewayCharge) async -> GatewayReply<GatewayPayment> { .unanswered(reason: "fuzzing") }
  public func capture(_ request: GatewayCaptureRequest) async -> GatewayReply<GatewayPayment> {
    .unanswered(reason: "fuzzing")
  }
  public func cancel(_ request: GatewayCancelRequest) async -> GatewayReply<GatewayPayment> { .unanswered(reason: "fuzzing") }
  public func refund(_ request: GatewayRefundRequest) async -> GatewayReply<GatewayRefund> { .unanswered(reason: "fuzzing") }
  public func card(of paymentData: String) async -> GatewayReply<GatewayCard> { .unanswered(reason: "fuzzing") }
  public func tokenize(applePayToken: ApplePayTokenization) async -> GatewayReply<GatewayToken> { .unanswered(reason: "fuzzing") }
  public func list(_ kind: GatewayListKind, createdSince: Int64, startingAfter: String?, limit: Int) async
    -> GatewayReply<GatewayListPage>
  { .unanswered(reason: "fuzzing") }
  public func shutdown() async {}
}
