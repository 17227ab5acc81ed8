import Foundation
import PayServiceAdyen
import PayServiceCore

/// A payservice configured with `gateway.kind: adyen` against a running `AdyenTestServer`: the
/// golden config with its gateway section replaced, the server's CA as `gateway.trustRoots`, and the
/// server's API and HMAC keys in the environment a process is given. The server decrypts the Apple
/// Pay tokens `factory` makes (it holds the factory's merchant key, as Adyen holds the merchant's
/// Payment Processing key).
public struct AdyenFixture {
  public let server: AdyenTestServer
  public let factory: TestTokenFactory
  public let directory: URL
  public let configPath: String

  public init(
    capture: Gateway.Capture = .automatic, maxRetries: Int = 0, requestTimeoutSeconds: Int = 2,
    maxConcurrentCalls: Int = 32
  ) throws {
    let factory = try TestTokenFactory()
    self.factory = factory
    server = try AdyenTestServer(
      applePayMerchantIdentifier: factory.merchantIdentifier, applePayPrivateKeyPEM: factory.merchantPrivateKeyPEM)
    directory = TestPaths.temporaryDirectory()
    let roots = try server.writeCACertificate(to: directory)
    let sandbox = "gateway:\n  kind: sandbox\n  chargeTokenTTLSeconds: 3600\n"
    let yaml = TestConfig.yaml()
    precondition(yaml.contains(sandbox), "the golden config's gateway section changed")
    let adyen = """
      gateway:
        kind: adyen
        chargeTokenTTLSeconds: 3600
        capture: \(capture.rawValue)
        merchantAccount: \(server.merchantAccount)
        apiBase: \(server.baseURL)
        trustRoots: \(roots)
        connectTimeoutSeconds: 2
        requestTimeoutSeconds: \(requestTimeoutSeconds)
        maxRetries: \(maxRetries)
        maxConcurrentCalls: \(maxConcurrentCalls)

      """
    configPath = directory.appendingPathComponent("config.yaml").path
    try yaml.replacingOccurrences(of: sandbox, with: adyen).write(toFile: configPath, atomically: true, encoding: .utf8)
  }

  public func config() throws -> Config {
    try ConfigLoader.load(path: configPath)
  }

  /// The environment a payservice process needs: the server's keys under ADYEN_API_KEY and
  /// ADYEN_HMAC_KEY.
  public var environment: [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["ADYEN_API_KEY"] = server.apiKey
    environment["ADYEN_HMAC_KEY"] = server.hmacKey
    return environment
  }

  /// The gateway's calls, as the executable wires them.
  public func gateway(_ config: Config, clock: ServiceClock) -> GatewayCalls {
    let adyen = config.gateway.adyen!
    return GatewayCalls(
      gateway: AdyenGateway(settings: adyen, apiKey: server.apiKey, clock: { clock.now() }),
      maxConcurrent: adyen.maxConcurrentCalls,
      notificationKeys: try! adyen.hmacKeys(environment: ["ADYEN_HMAC_KEY": server.hmacKey]).get())
  }

  /// A context on a fresh store of `backend`, charging through the test server.
  public func context(backend: StoreBackend, now: Int64 = TestConfig.now) throws -> ServiceContext {
    let config = try config()
    let (store, _) = try backend.freshStore(config: config)
    let clock = ServiceClock(pinned: now)
    return ServiceContext(config: config, store: store, clock: clock, gateway: gateway(config, clock: clock))
  }

  /// The cart the Adyen tests buy: two mugs of the golden config.
  public static let cart = #"[{"sku":"mug","quantity":2}]"#
  public static let contact = BackOfficeFixture.contacts[0]

  /// authorizePayment's params for `cart` paid with `paymentData` (its JSON), as the device claims
  /// the first test card, under Apple's `transaction` identifier.
  public static func authorizeParams(_ paymentData: String, cart: String = cart, transaction: String) -> String {
    #"{"items":\#(cart),"shippingMethod":"free","payment":{"token":{"paymentData":\#(paymentData),"paymentMethod":\#(BackOfficeFixture.cards[0]),"transactionIdentifier":"\#(transaction)"},"shippingContact":\#(contact),"billingContact":\#(contact)}}"#
  }

  /// An Apple Pay token's payment data (its JSON text) for `amountMinor` of US dollars, paid with
  /// `number`, as the device hands it over.
  public func applePayToken(
    amountMinor: Int, number: String = "4111111111111111", expiration: String = "301231", now: Int64 = TestConfig.now
  ) throws -> String {
    var payment = TestTokenFactory.Payment()
    payment.accountNumber = number
    payment.expiration = expiration
    payment.transactionAmount = amountMinor
    payment.currencyCode = "840"
    return JSONWriter.string(try factory.token(payment, signingTime: now))
  }
}

extension AdyenFixture {
  public struct CheckoutFailed: Error, CustomStringConvertible {
    public let description: String
  }

  /// Authorizes `cart` paid with `number` through a running payservice and returns the
  /// processOrder line for it. payservice does not decrypt the token, so a first authorization
  /// (`transaction`-probe, a token for one cent) reads the cart's total; the token that goes to
  /// Adyen carries that total, as the device's would.
  public func checkoutLine(
    on running: RunningPayservice, cart: String = cart, number: String = "4111111111111111", transaction: String = "T",
    id: Int = 2
  ) throws -> String {
    func authorize(_ paymentData: String, _ transaction: String) throws -> JSONValue {
      let params = Self.authorizeParams(paymentData, cart: cart, transaction: transaction)
      let line = #"{"jsonrpc":"2.0","id":"a","method":"authorizePayment","params":\#(params)}"#
      let answer = try JSONParser.parse(try running.ask(line, timeout: 15))
      guard let result = answer["result"], result["chargeToken"]?.stringValue != nil else {
        throw CheckoutFailed(description: "authorizePayment: \(answer.compact)")
      }
      return result
    }
    let probe = try authorize(try applePayToken(amountMinor: 1), transaction + "-probe")
    guard let total = probe["amount"]?.stringValue, let minor = Int(total.replacingOccurrences(of: ".", with: "")) else {
      throw CheckoutFailed(description: "no amount in \(probe.compact)")
    }
    let authorized = try authorize(try applePayToken(amountMinor: minor, number: number), transaction)
    return StripeFixture.processLine(token: authorized["chargeToken"]!.stringValue!, amount: total, cart: cart, id: id)
  }

  /// processAdyenNotification's request line for a webhook body.
  public static func notificationLine(_ payload: String, id: Int = 5) -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"method":"processAdyenNotification","params":"#
      + JSONWriter.string(JSONValue.object(JSONObject([("payload", .string(payload))]))) + "}"
  }
}
