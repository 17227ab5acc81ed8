// The fuzz harness's `signed` target (Fuzz/Sources): inputs are the claims of signed items, which the harness signs properly (the
// App Store test authority's chain, the Stripe test secret, an Apple Pay test authority) before sending them, so that the
// fuzzer's mutations reach what runs after a signature verifies: dates, amounts, ids, environments
// and nesting chosen by an attacker who holds a valid signer or replays a real one.
import Crypto
import Foundation
import PayServiceCore

/// Signs each input's claims and answers the request in process, with the `requests` target's
/// oracle (one valid JSON-RPC answer, no trap).
///
/// An input is a kind on its first line (`transaction`, `renewal`, `notification`, `stripe`,
/// `adyen`, `applepay`) and the claims, JSON text, on the rest. App Store claims are signed as a compact JWS by the test
/// authority (whose root the config trusts); in a notification, `data.signedTransactionInfo` and
/// `data.signedRenewalInfo` given as objects are signed as items first. Stripe claims are the
/// event's body, signed with the webhook secret at the pinned clock. Adyen claims are a notification
/// body whose items are each signed with the HMAC key over whatever their members hold, and sent to
/// a shop whose gateway is Adyen. Apple Pay claims are the decrypted payment data of an EC_v1 token
/// (the card number, cryptogram, amount, `merchantTokenIdentifier`, `merchantTokenMetadata`…),
/// encrypted for the merchant certificate and signed by a `TestTokenFactory` whose root the Apple
/// Pay shop's config trusts, and sent through `authorizePayment` for one 1.00 USD ticket; besides
/// the answer's validity, the oracle checks that no card number, cryptogram or EMV data the claims
/// hold appears in the answer. Claims that are not JSON are signed as they are.
public final class SignedPayloadOracle {
  public static let webhookSecret = "whsec_payservice_fuzz"
  /// The Adyen shop's webhook HMAC key (hex) and merchant account.
  public static let adyenHMACKey = "2B7E151628AED2A6ABF7158809CF4F3C2B7E151628AED2A6ABF7158809CF4F3C"
  public static let adyenMerchantAccount = "FuzzECOM"
  let shop: AppStoreShop
  let handler: RequestHandler
  let adyenHandler: RequestHandler
  /// The Apple Pay shop (`ApplePayVector`'s config: one 1.00 USD ticket) and the authority that
  /// signs and encrypts its tokens.
  let applePayFactory: TestTokenFactory
  let applePayHandler: RequestHandler

  public init() throws {
    shop = try AppStoreShop()
    let config = shop.config()
    let store = try SQLiteStore(path: ":memory:", newIdentifierKey: TestConfig.identifierKey)
    try store.seedStock(config.catalog)
    let gateway = GatewayCalls(gateway: SilentGateway(), maxConcurrent: 1, webhookSecrets: [Self.webhookSecret])
    handler = TestConfig.handler(
      ServiceContext(config: config, store: store, clock: ServiceClock(pinned: TestConfig.now), gateway: gateway))
    let adyenConfig = try ConfigLoader.parse(
      yaml: TestConfig.yaml().replacingOccurrences(
        of: "gateway:\n  kind: sandbox\n",
        with: "gateway:\n  kind: adyen\n  merchantAccount: \(Self.adyenMerchantAccount)\n  apiBase: https://127.0.0.1:9\n"))
    let adyenStore = try SQLiteStore(path: ":memory:", newIdentifierKey: TestConfig.identifierKey)
    try adyenStore.seedStock(adyenConfig.catalog)
    let keys = try adyenConfig.gateway.adyen!.hmacKeys(environment: ["ADYEN_HMAC_KEY": Self.adyenHMACKey]).get()
    adyenHandler = TestConfig.handler(
      ServiceContext(
        config: adyenConfig, store: adyenStore, clock: ServiceClock(pinned: TestConfig.now),
        gateway: GatewayCalls(gateway: SilentGateway(), maxConcurrent: 1, notificationKeys: keys)))
    applePayFactory = try TestTokenFactory()
    let directory = TestPaths.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }  // read once, while parsing
    // Stock for every input a long run authorizes (the store is opened once).
    let applePayConfig = try ConfigLoader.parse(
      yaml: ApplePayVector.configYAML(applePay: try applePayFactory.writeCredentials(to: directory))
        .replacingOccurrences(of: "quantityOnHand: 5}", with: "quantityOnHand: 1000000000}"),
      file: directory.appendingPathComponent("config.yaml").path)
    let applePayStore = try SQLiteStore(path: ":memory:", newIdentifierKey: TestConfig.identifierKey)
    try applePayStore.seedStock(applePayConfig.catalog)
    applePayHandler = TestConfig.handler(
      ServiceContext(config: applePayConfig, store: applePayStore, clock: ServiceClock(pinned: ApplePayVector.now)))
  }

  public func check(_ input: [UInt8]) -> String? {
    guard let line = request(input) else { return nil }
    let answer = answer(input, line: line)
    let output = answer.map { Array($0.utf8) + [UInt8(ascii: "\n")] } ?? []
    if let problem = FuzzOracle.verify(input: Array(line.utf8) + [UInt8(ascii: "\n")], output: output) { return problem }
    if let answer, input.starts(with: Array("applepay\n".utf8)) {
      for (name, secret) in Self.secrets(in: Array(input.dropFirst("applepay\n".utf8.count)))
      where answer.contains(secret) || answer.contains(Self.escaped(secret)) {
        return "the answer holds the decrypted payment data's \(name)"
      }
    }
    return nil
  }

  /// The answer line to `input`'s request; nil when it stands for none.
  public func answer(_ input: [UInt8]) -> String? {
    guard let line = request(input) else { return nil }
    return answer(input, line: line)
  }

  func answer(_ input: [UInt8], line: String) -> String? {
    let served =
      input.starts(with: Array("adyen\n".utf8))
      ? adyenHandler : input.starts(with: Array("applepay\n".utf8)) ? applePayHandler : handler
    return Array(line.utf8).withUnsafeBytes { served.handle(line: $0) }.map { String(decoding: $0, as: UTF8.self) }
  }

  /// What Apple Pay claims hold that no answer may repeat: the card number (12 or more digits),
  /// and the cryptogram and EMV data (16 or more characters), each unless the claims hold it
  /// elsewhere too (in the card's metadata, say, which is not secret).
  public static func secrets(in claims: [UInt8]) -> [(name: String, value: String)] {
    guard case .object(let object)? = try? JSONParser.parse(claims) else { return [] }
    var found: [(name: String, value: String, member: String)] = []
    if case .string(let account)? = object["applicationPrimaryAccountNumber"], account.utf8.count >= 12,
      account.utf8.allSatisfy({ (0x30...0x39).contains($0) })
    {
      found.append(("card number", account, "applicationPrimaryAccountNumber"))
    }
    if case .object(let details)? = object["paymentData"] {
      for key in ["onlinePaymentCryptogram", "emvData", "encryptedPINData"] {
        if case .string(let text)? = details[key], text.count >= 16 { found.append((key, text, "paymentData")) }
      }
    }
    return found.compactMap { secret -> (name: String, value: String)? in
      var rest = object
      if secret.member == "paymentData", case .object(var details)? = object["paymentData"] {
        details.members.removeAll { $0.value == .string(secret.value) }
        rest.members = rest.members.map { $0.key == "paymentData" ? ($0.key, .object(details)) : $0 }
      } else {
        rest.members.removeAll { $0.key == secret.member }
      }
      let elsewhere = JSONWriter.string(JSONValue.object(rest))
      if elsewhere.contains(secret.value) || elsewhere.contains(escaped(secret.value)) { return nil }
      return (secret.name, secret.value)
    }
  }

  /// `text` as it appears inside a JSON string.
  static func escaped(_ text: String) -> String { String(JSONWriter.string(JSONValue.string(text)).dropFirst().dropLast()) }

  /// The request line `input` stands for; nil when its kind is none of the six.
  public func request(_ input: [UInt8]) -> String? {
    let split = input.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
    let kind = String(decoding: split[0], as: UTF8.self)
    let claims = split.count > 1 ? String(decoding: split[1], as: UTF8.self) : ""
    let (method, params): (String, String)
    switch kind {
    case "applepay":
      // The claims' bytes as they are (not JSON, not UTF-8: what the decryption yields); the
      // transaction id is theirs too, so that the same claims again are a replay.
      let plaintext = split.count > 1 ? Array(split[1]) : []
      let token: JSONValue
      do {
        token = try applePayFactory.token(
          plaintext: plaintext, signingTime: ApplePayVector.signingTime, transactionId: Array(SHA256.hash(data: plaintext)))
      } catch {
        preconditionFailure("the Apple Pay test authority cannot sign: \(error)")
      }
      (method, params) = ("authorizePayment", ApplePayVector.authorizeParams(paymentData: token))
    case "transaction", "renewal":
      (method, params) = ("verifyAppStoreTransaction", #"{"signedTransaction":\#(JSONWriter.string(sign(claims)))}"#)
    case "notification":
      (method, params) = ("processAppStoreNotification", #"{"signedPayload":\#(JSONWriter.string(sign(claims, nested: true)))}"#)
    case "stripe":
      let header = StripeWebhookSignature.header(payload: claims, secret: Self.webhookSecret, timestamp: TestConfig.now)
      (method, params) = ("processStripeEvent", #"{"payload":\#(JSONWriter.string(claims)),"signature":"\#(header)"}"#)
    case "adyen":
      (method, params) = ("processAdyenNotification", #"{"payload":\#(JSONWriter.string(Self.signAdyen(claims)))}"#)
    default:
      return nil
    }
    return #"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":\#(params)}"#
  }

  /// A notification body with each item's `additionalData.hmacSignature` made over what its members
  /// hold (a member that is not text as its JSON, an absent one as empty), as Adyen would sign it.
  static func signAdyen(_ claims: String) -> String {
    guard case .object(var body)? = try? JSONParser.parse(claims),
      let key = try? AdyenNotificationSignature.keys(in: adyenHMACKey, variable: "key").get().first
    else { return claims }
    for (index, member) in body.members.enumerated() where member.key == "notificationItems" {
      guard case .array(var entries) = member.value else { continue }
      for (position, entry) in entries.enumerated() {
        guard case .object(var wrapper) = entry else { continue }
        for (inner, wrapped) in wrapper.members.enumerated() where wrapped.key == "NotificationRequestItem" {
          guard case .object(var item) = wrapped.value else { continue }
          func text(_ value: JSONValue?) -> String {
            switch value {
            case .string(let text)?: return text
            case .number(let text)?: return text
            case nil: return ""
            case let other?: return JSONWriter.string(other)
            }
          }
          var amount = JSONObject()
          if case .object(let object)? = item["amount"] { amount = object }
          let claimed = AdyenNotification.Item(
            pspReference: text(item["pspReference"]), originalReference: item["originalReference"].map { text($0) },
            merchantAccountCode: text(item["merchantAccountCode"]), merchantReference: text(item["merchantReference"]),
            value: text(amount["value"]), currency: text(amount["currency"]), eventCode: text(item["eventCode"]),
            success: text(item["success"]), eventDate: nil, reason: nil, hmacSignature: nil, additionalData: [:])
          var data = JSONObject()
          if case .object(let object)? = item["additionalData"] { data = object }
          data.members.removeAll { $0.key == "hmacSignature" }
          data.members.append(("hmacSignature", .string(AdyenNotificationSignature.signature(claimed, key: key))))
          item.members.removeAll { $0.key == "additionalData" }
          item.members.append(("additionalData", .object(data)))
          wrapper.members[inner].value = .object(item)
        }
        entries[position] = .object(wrapper)
      }
      body.members[index].value = .array(entries)
    }
    return JSONWriter.string(JSONValue.object(body))
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
  public var dashboard: String { "the Stripe Dashboard" }
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
  public func lookUp(_ work: GatewayWork) async -> GatewayFound? { nil }
  public func shutdown() async {}
}
