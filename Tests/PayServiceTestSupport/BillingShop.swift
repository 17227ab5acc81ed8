import Foundation
import PayServiceCore

/// A coffee shop that sells each kind of billing plan, on a store of its own, driven through the
/// built binary with `--now` moved forward: checkouts (authorizePayment, then processOrder),
/// back-office sessions (`--back-office`) and `payservice billing run`. With a `StripeTestServer`
/// it charges through it (the server's CA trusted, its key in the environment); without one,
/// through the sandbox.
///
/// The catalog (tax 8% everywhere, shipping free):
/// - `beans-club`: 18.00 a month (19.44 with tax) after a 14-day trial of 5.00 (5.40);
/// - `tea-club`: 10.00 a month (10.80), no trial: the checkout pays the first month;
/// - `cafe-card`: 25.00 (27.00), reloaded when the balance falls below 5.00;
/// - `espresso-machine`: 499.00 (538.92), a pre-order paid on 2027-02-01T17:00:00Z (0.00 at
///   checkout), free to cancel until 2027-01-25T08:00:00Z;
/// - `mug`: 8.00, paid once.
public struct BillingShop: Sendable {
  public let backend: StoreBackend
  public let server: StripeTestServer?
  public let directory: URL
  public let configPath: String
  public let database: String
  /// The environment of every process: the test server's key (with Stripe) and the tests'
  /// identifier key.
  public let environment: [String: String]

  public static let defaultBilling = "billing:\n  retries: [1, 3, 5]\n  whenRetriesFail: unpaid\n"

  /// - Parameters:
  ///   - billing: the config's `billing:` section, as YAML.
  ///   - stock: the stock of every billed product.
  public init(
    backend: StoreBackend, stripe server: StripeTestServer? = nil, billing: String = defaultBilling, stock: Int = 1000,
    maxConcurrentCalls: Int = 32, requestTimeoutSeconds: Int = 5, maxRetries: Int = 3
  ) throws {
    self.backend = backend
    self.server = server
    directory = TestPaths.temporaryDirectory()
    var gateway = "gateway:\n  kind: sandbox\n  chargeTokenTTLSeconds: 3600\n"
    var environment = ProcessInfo.processInfo.environment
    if let server {
      let roots = try server.writeCACertificate(to: directory)
      gateway = """
        gateway:
          kind: stripe
          chargeTokenTTLSeconds: 3600
          capture: automatic
          apiBase: \(server.baseURL)
          trustRoots: \(roots)
          connectTimeoutSeconds: 2
          requestTimeoutSeconds: \(requestTimeoutSeconds)
          maxRetries: \(maxRetries)
          maxConcurrentCalls: \(maxConcurrentCalls)

        """
      environment["STRIPE_SECRET_KEY"] = server.secretKey
      environment["STRIPE_WEBHOOK_SECRET"] = StripeFixture.webhookSecret
    }
    environment[IdentifierKey.pinVariable] = TestConfig.identifierKey.hex
    self.environment = environment
    configPath = directory.appendingPathComponent("shop.yaml").path
    try Self.yaml(gateway: gateway, billing: billing, stock: stock).write(toFile: configPath, atomically: true, encoding: .utf8)
    database = try backend.freshDatabase()
  }

  public static func yaml(gateway: String, billing: String, stock: Int) -> String {
    """
    merchant:
      identifier: merchant.com.example.coffee
      displayName: Example Coffee
      countryCode: US
      currencyCode: USD
      supportedNetworks: [visa, masterCard, amex, discover]
      merchantCapabilities: [supports3DS, supportsCredit, supportsDebit]
      requiredShippingContactFields: [postalAddress, name, email]
      requiredBillingContactFields: [postalAddress]

    catalog:
      - sku: mug
        name: Mug
        description: Stoneware coffee mug
        price: "8.00"
        quantityOnHand: 100
      - sku: beans-club
        name: Beans Club
        description: A bag of fresh beans every month
        price: "18.00"
        quantityOnHand: \(stock)
        recurring:
          interval: month
          trial: {amount: "5.00", interval: day, intervalCount: 14}
      - sku: tea-club
        name: Tea Club
        description: A tin of tea every month
        price: "10.00"
        quantityOnHand: \(stock)
        recurring:
          interval: month
      - sku: cafe-card
        name: Café Card
        description: Café Card top-up, reloaded when the balance runs low
        price: "25.00"
        quantityOnHand: \(stock)
        automaticReload: {thresholdAmount: "5.00"}
      - sku: espresso-machine
        name: Espresso Machine (pre-order)
        description: Espresso machine, paid when it ships
        price: "499.00"
        quantityOnHand: \(stock)
        deferred:
          paymentDate: "2027-02-01T17:00:00Z"
          freeCancellationDate: "2027-01-25T08:00:00Z"
          freeCancellationTimeZone: America/Los_Angeles

    shipping:
      shipsTo: [US]
      methods:
        - identifier: standard
          label: Standard Shipping
          detail: Delivers in 3 to 5 days
          transitDays: 3
          transitDaysMax: 5
          amount: "0.00"

    tax:
      rounding: halfUp
      defaultRate: "0.08"

    \(gateway)
    applePay:
      managementURL: https://coffee.example.com/account/payments
      billingAgreement: You can cancel at any time on your account page.

    \(billing)
    """
  }

  /// The arguments every process gets: the config, the store and the clock.
  public func arguments(at now: String) -> [String] {
    ["--config", configPath, "--database", database, "--now", now]
  }

  /// A JSON-RPC request line.
  public static func line(_ id: Int, _ method: String, _ params: String) -> String {
    #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#
  }

  /// Runs one back-office process at `now` on `requests` (method, params) to its end; the answer
  /// to each (the whole response: `result` or `error`), in order.
  public func session(at now: String, _ requests: [(method: String, params: String)]) throws -> [JSONValue] {
    let lines = requests.enumerated().map { Self.line($0.offset + 1, $0.element.method, $0.element.params) }
    let result = try PayserviceProcess.run(
      arguments(at: now) + ["--back-office", "--quiet"], stdin: Data((lines.joined(separator: "\n") + "\n").utf8),
      environment: environment)
    guard result.status == 0 else { throw Failure(message: "payservice exited \(result.status): \(result.stderr)") }
    let answers = try result.stdoutText.split(separator: "\n").map { try JSONParser.parse(String($0)) }
    guard answers.count == lines.count else {
      throw Failure(message: "\(lines.count) requests, \(answers.count) answers: \(result.stdoutText) \(result.stderr)")
    }
    return answers
  }

  /// One request's `result`; throws on an error answer.
  public func call(at now: String, _ method: String, _ params: String = "{}") throws -> JSONValue {
    let answer = try session(at: now, [(method, params)])[0]
    guard let result = answer["result"] else { throw Failure(message: "\(method): \(answer.compact)") }
    return result
  }

  public struct Failure: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
  }

  /// A cart to check out: `quantity` of `sku`, paid with `paymentData` (a sandbox or Stripe test
  /// token or PaymentMethod).
  public struct Checkout: Sendable {
    public var sku: String
    public var quantity: Int
    public var paymentData: String

    public init(_ sku: String, quantity: Int = 1, paymentData: String = "tok_visa") {
      self.sku = sku
      self.quantity = quantity
      self.paymentData = paymentData
    }
  }

  public static let contact = BackOfficeFixture.contacts[0]

  /// Checks out every cart at `now`: one process authorizes them all, another places them all
  /// (each request line after the other, without waiting for answers). The processOrder results,
  /// in order; throws unless each succeeded.
  public func checkout(at now: String, _ carts: [Checkout]) throws -> [JSONValue] {
    let placed = try checkoutAnswers(at: now, carts)
    return try placed.indices.map { index in
      guard let result = placed[index]["result"], result["status"]?.stringValue == "succeeded" else {
        throw Failure(message: "processOrder \(carts[index].sku): \(placed[index].compact)")
      }
      return result
    }
  }

  /// As `checkout`, the processOrder answers as they came (whole responses), whatever they say;
  /// throws only when an authorization fails.
  public func checkoutAnswers(at now: String, _ carts: [Checkout]) throws -> [JSONValue] {
    let items = carts.map { #"[{"sku":"\#($0.sku)","quantity":\#($0.quantity)}]"# }
    let authorized = try session(
      at: now,
      carts.indices.map { index in
        (
          "authorizePayment",
          #"{"items":\#(items[index]),"shippingMethod":"standard","payment":{"token":{"paymentData":"\#(carts[index].paymentData)","paymentMethod":\#(BackOfficeFixture.cards[0]),"transactionIdentifier":"T\#(index)"},"shippingContact":\#(Self.contact),"billingContact":\#(Self.contact)}}"#
        )
      })
    let placing = try authorized.indices.map { index -> (String, String) in
      let result = authorized[index]["result"]
      guard result?["status"]?.stringValue == "success", let token = result?["chargeToken"]?.stringValue,
        let amount = result?["amount"]?.stringValue
      else { throw Failure(message: "authorizePayment \(carts[index].sku): \(authorized[index].compact)") }
      return (
        "processOrder",
        #"{"chargeToken":"\#(token)","items":\#(items[index]),"shippingMethod":"standard","shippingContact":\#(Self.contact),"amount":"\#(amount)","currencyCode":"USD"}"#
      )
    }
    return try session(at: now, placing)
  }

  /// The agreement a checkout's processOrder result made.
  public static func agreementId(_ placed: JSONValue) throws -> String {
    guard let id = placed["order"]?["agreement"]?["agreementId"]?.stringValue else {
      throw Failure(message: "no agreement in \(placed.compact)")
    }
    return id
  }

  /// `payservice billing run` at `now` (`--until` when given): its exit status and the result it
  /// printed (a run of one runBilling call).
  public func billingRun(at now: String, until: String? = nil) throws -> (status: Int32, result: JSONValue) {
    let run = try billingRun(at: now, until.map { ["--until", $0] } ?? [])
    guard run.results.count == 1 else {
      throw Failure(message: "billing run printed \(run.results.count) results (\(run.status)): \(run.stderr)")
    }
    return (run.status, run.results[0])
  }

  /// `payservice billing run` at `now` with `options`: its exit status, each result it printed (one
  /// line per runBilling call) and what it said on stderr.
  public func billingRun(at now: String, _ options: [String]) throws -> (status: Int32, results: [JSONValue], stderr: String) {
    let run = try PayserviceProcess.run(["billing", "run"] + arguments(at: now) + options, environment: environment)
    return (run.status, try run.stdoutText.split(separator: "\n").map { try JSONParser.parse(String($0)) }, run.stderr)
  }

  /// The process of `payservice billing run` at `now`, started, not waited for.
  public func startBillingRun(at now: String) throws -> RunningPayservice {
    try RunningPayservice(["billing", "run"] + arguments(at: now), environment: environment)
  }

  /// Every order in the store (listOrders' order: newest first), read page by page.
  public func orders() throws -> [OrderSummaryRow] {
    let store = try backend.open(database)
    var rows: [OrderSummaryRow] = []
    var after: (createdAt: String, orderId: String)?
    while true {
      let page = try store.orders(OrderQuery(after: after, limit: 100))
      rows += page
      guard page.count == 100, let last = page.last else { return rows }
      after = (last.createdAt, last.orderId)
    }
  }

  // MARK: - What the tests compare, one line each

  /// An agreement's events (getAgreement), one line each: type, then period, attempt, amount,
  /// status, failure and decline codes when present, then `@` and when.
  public static func events(_ agreement: JSONValue) -> [String] {
    (agreement["events"]?.arrayValue ?? []).map { event in
      var parts = [event["type"]?.stringValue ?? "?"]
      if let period = event["period"] { parts.append("p\(period.compact)") }
      if let attempt = event["attempt"] { parts.append("a\(attempt.compact)") }
      for name in ["amount", "status", "failureCode", "declineCode"] {
        if let text = event[name]?.stringValue { parts.append(text) }
      }
      parts.append("@" + (event["at"]?.stringValue ?? "?"))
      return parts.joined(separator: " ")
    }
  }

  /// A PaymentIntent as the tests count it: amount, on or off session, status,
  /// `setup_future_usage` (or -), the idempotency key without its agreement's prefix
  /// (`period-3-attempt-1`; the checkout's is `checkout`), and `@` when it was made.
  public static func describe(_ intent: StripeTestServer.PaymentIntentRecord, checkoutOrderId: String? = nil) -> String {
    var key = intent.idempotencyKey ?? "-"
    if let agreement = intent.metadata["agreement_id"] {
      key = key.replacingOccurrences(of: "payservice-agreement-\(agreement)-", with: "")
    }
    if let order = checkoutOrderId, key == Identifiers.chargeIdempotencyKey(orderId: order) { key = "checkout" }
    return [
      String(intent.amount), intent.offSession ? "off_session" : "on_session", intent.status,
      intent.setupFutureUsage ?? "-", key, "@" + RFC3339.format(intent.created),
    ].joined(separator: " ")
  }
}
