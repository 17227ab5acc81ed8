import Foundation
import PayServiceCore
import PayServiceStripe

/// A payservice configured with `gateway.kind: stripe` against a running `StripeTestServer`: the
/// golden config with its gateway section replaced, the server's CA as `gateway.trustRoots`, and
/// the server's secret key in the environment a process is given.
public struct StripeFixture: Sendable {
  public let server: StripeTestServer
  public let directory: URL
  public let configPath: String

  /// - Parameters:
  ///   - maxRetries, requestTimeoutSeconds: the gateway's; tests of lost answers use no retries
  ///     and a short timeout.
  public init(
    server: StripeTestServer, capture: Gateway.Capture = .automatic, maxRetries: Int = 0,
    requestTimeoutSeconds: Int = 2, maxConcurrentCalls: Int = 32
  ) throws {
    self.server = server
    directory = TestPaths.temporaryDirectory()
    let roots = try server.writeCACertificate(to: directory)
    let sandbox = "gateway:\n  kind: sandbox\n  chargeTokenTTLSeconds: 3600\n"
    let yaml = TestConfig.yaml()
    precondition(yaml.contains(sandbox), "the golden config's gateway section changed")
    let stripe = """
      gateway:
        kind: stripe
        chargeTokenTTLSeconds: 3600
        capture: \(capture.rawValue)
        apiBase: \(server.baseURL)
        trustRoots: \(roots)
        connectTimeoutSeconds: 2
        requestTimeoutSeconds: \(requestTimeoutSeconds)
        maxRetries: \(maxRetries)
        maxConcurrentCalls: \(maxConcurrentCalls)

      """
    configPath = directory.appendingPathComponent("config.yaml").path
    try yaml.replacingOccurrences(of: sandbox, with: stripe).write(toFile: configPath, atomically: true, encoding: .utf8)
  }

  public func config() throws -> Config {
    try ConfigLoader.load(path: configPath)
  }

  /// The webhook endpoint's signing secret the fixture's processes and contexts hold.
  public static let webhookSecret = "whsec_fixture"

  /// The environment a payservice process needs: the server's key under STRIPE_SECRET_KEY, and
  /// the webhook secret under STRIPE_WEBHOOK_SECRET.
  public var environment: [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["STRIPE_SECRET_KEY"] = server.secretKey
    environment["STRIPE_WEBHOOK_SECRET"] = Self.webhookSecret
    return environment
  }

  /// The gateway's calls, as the executable wires them.
  public func gateway(_ config: Config) -> GatewayCalls {
    let stripe = config.gateway.stripe!
    return GatewayCalls(
      gateway: StripeGateway(settings: stripe, secretKey: server.secretKey), maxConcurrent: stripe.maxConcurrentCalls,
      webhookSecrets: [Self.webhookSecret])
  }

  /// `processStripeEvent`'s params for an event of `type` about `object`, signed with the
  /// fixture's webhook secret at `now` (Stripe's scheme).
  public static func webhook(
    id: String, type: String, object: String, now: Int64 = TestConfig.now, created: Int64? = nil
  ) -> String {
    let payload =
      #"{"id":"\#(id)","object":"event","api_version":"2024-06-20","created":\#(created ?? now - 5),"data":{"object":\#(object)},"livemode":false,"pending_webhooks":1,"request":{"id":null,"idempotency_key":null},"type":"\#(type)"}"#
    let header = StripeWebhookSignature.header(payload: payload, secret: webhookSecret, timestamp: now)
    return JSONWriter.string(
      JSONValue.object(JSONObject([("payload", .string(payload)), ("signature", .string(header))])))
  }

  /// The log file of the handlers `handler(_:backOffice:)` makes: one line per request.
  public var logPath: String { directory.appendingPathComponent("requests.log").path }

  /// The logs of the handlers made so far (flushed before the log file is read).
  private final class Logs: @unchecked Sendable {
    var logs: [RequestLog] = []
  }

  private let logs = Logs()

  /// A handler answering payservice's methods, logging every request to `logPath`. For the test's
  /// thread only, like any handler.
  public func handler(_ context: ServiceContext, backOffice: Bool = false) -> RequestHandler {
    let fd = open(logPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    precondition(fd >= 0, "cannot open \(logPath)")
    let log = RequestLog(fd: fd, level: .requests)
    logs.logs.append(log)
    return RequestHandler(context: context, methods: .payservice(backOffice: backOffice), log: log)
  }

  /// Whether the server's secret key appears in the log or anywhere in the context's store.
  public func secretLeaked(_ context: ServiceContext) throws -> Bool {
    for log in logs.logs { log.flush() }
    let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    return try log.contains(server.secretKey) || context.store.mentions(server.secretKey)
  }

  /// A context on a fresh store of `backend`, charging through the test server.
  public func context(backend: StoreBackend, now: Int64 = TestConfig.now) throws -> ServiceContext {
    let config = try config()
    let (store, _) = try backend.freshStore(config: config)
    return ServiceContext(config: config, store: store, clock: ServiceClock(pinned: now), gateway: gateway(config))
  }

  /// An authorizePayment request line for `cart` (shipping free, the first test contact and card).
  public static func authorizeLine(paymentData: String = "tok_visa", cart: String, id: Int = 1) -> String {
    let contact = BackOfficeFixture.contacts[0]
    return #"{"jsonrpc":"2.0","id":\#(id),"method":"authorizePayment","params":{"items":\#(cart),"shippingMethod":"free","payment":{"token":{"paymentData":"\#(paymentData)","paymentMethod":\#(BackOfficeFixture.cards[0]),"transactionIdentifier":"T"},"shippingContact":\#(contact),"billingContact":\#(contact)}}}"#
  }

  /// The processOrder request line for an authorized `cart`.
  public static func processLine(token: String, amount: String, cart: String, id: Int = 2) -> String {
    let contact = BackOfficeFixture.contacts[0]
    return #"{"jsonrpc":"2.0","id":\#(id),"method":"processOrder","params":{"chargeToken":"\#(token)","items":\#(cart),"shippingMethod":"free","shippingContact":\#(contact),"amount":"\#(amount)","currencyCode":"USD"}}"#
  }
}
