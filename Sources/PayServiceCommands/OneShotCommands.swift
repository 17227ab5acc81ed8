import ArgumentParser
import Foundation
import PayServiceCore

/// What a one-shot command answers with: the config, store and clock of its options, opened as
/// `serve` opens them (an invalid config or a store that cannot open exits 2), and a handler that
/// answers requests the way a served line is answered.
struct OneShotSession {
  let handler: RequestHandler
  private let log: RequestLog
  private let gateway: GatewayCalls?
  private let sessions: MerchantSessionCalls?
  private let appStore: AppStoreServerCalls?

  init(_ service: ServiceOptions, backOffice: Bool) {
    let loaded: Config
    do {
      loaded = try ConfigLoader.load(path: service.config)
    } catch {
      ServeSettings.fail("invalid config:\n\(error)")
    }
    let store = ServeSettings.openStore(service.database, now: service.now)
    do {
      try store.seedStock(loaded.catalog)
    } catch {
      ServeSettings.fail("\(error)")
    }
    log = RequestLog(level: .warnings)
    let clock = ServiceClock(pinned: service.now.flatMap(RFC3339.parse))
    let checks = ServeSettings.startChecks(for: loaded, now: clock.now())
    if let problem = checks.problems.first { ServeSettings.fail(problem) }
    for warning in checks.warnings { log.warning(warning) }
    gateway = ServeSettings.gateway(for: loaded)
    sessions = ServeSettings.merchantSessions(for: loaded)
    appStore = ServeSettings.appStoreServer(for: loaded)
    handler = RequestHandler(
      context: ServiceContext(
        config: loaded, store: store, clock: clock, gateway: gateway, merchantSessions: sessions,
        appStoreServer: appStore, backOffice: backOffice),
      methods: .payservice(backOffice: backOffice), log: log)
  }

  var context: ServiceContext { handler.context }

  /// One request's outcome, nothing printed.
  func call(method: String, paramsText: String?, pretty: Bool) -> OneShotCall.Outcome {
    OneShotCall.run(method: method, paramsText: paramsText, handler: handler, pretty: pretty)
  }

  /// Answers one request, prints it as `payservice call` does, ends the session and returns the exit status.
  func answer(method: String, paramsText: String?, pretty: Bool, to responses: Int32) -> Int32 {
    let outcome = call(method: method, paramsText: paramsText, pretty: pretty)
    close()
    Call.write(outcome.stdout, to: responses)
    Call.write(outcome.stderr, to: STDERR_FILENO)
    return outcome.exitCode
  }

  func close() {
    log.flush()
    gateway?.shutdown()
    sessions?.shutdown()
    appStore?.shutdown()
  }

  /// `params` as JSON object text.
  static func params(_ members: [(String, JSONValue)]) -> String {
    var object = JSONObjectBuilder(capacity: members.count)
    for (name, value) in members { object.set(name, value) }
    return JSONWriter.string(object.value)
  }
}

/// A one-shot of the back office: one request of `method`, answered as `payservice call … --back-office`.
protocol BackOfficeOneShot: ParsableCommand {
  var service: ServiceOptions { get }
  var pretty: Bool { get }
  /// The method and its params.
  func request() -> (method: String, params: [(String, JSONValue)])
}

extension BackOfficeOneShot {
  func run() throws {
    let responses = StdoutGuard.install()
    let (method, params) = request()
    let code = OneShotSession(service, backOffice: true).answer(
      method: method, paramsText: OneShotSession.params(params), pretty: pretty, to: responses)
    Foundation.exit(code)
  }

  /// As `run`, but a result that `incomplete` says did not do everything exits 1, for cron to see.
  func run(exitingOneWhen incomplete: (JSONObject) -> Bool) {
    let responses = StdoutGuard.install()
    let (method, params) = request()
    let session = OneShotSession(service, backOffice: true)
    let outcome = session.call(method: method, paramsText: OneShotSession.params(params), pretty: pretty)
    session.close()
    Call.write(outcome.stdout, to: responses)
    Call.write(outcome.stderr, to: STDERR_FILENO)
    var failed = false
    if case .object(let result)? = try? JSONParser.parse(outcome.stdout) { failed = incomplete(result) }
    Foundation.exit(outcome.exitCode == 0 && failed ? 1 : outcome.exitCode)
  }
}

/// `payservice stripe reconcile`: catch up with Stripe.
struct StripeCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stripe",
    abstract: "Catch up with Stripe (the back office's reconcileStripe).",
    subcommands: [Reconcile.self])

  struct Reconcile: BackOfficeOneShot {
    static let configuration = CommandConfiguration(
      abstract: "Take in the payments, refunds and disputes Stripe made since a time (reconcileStripe).",
      discussion: """
        Prints the method's result JSON and exits 0 when every list was read (what it changed, order by \
        order); prints the failed result and exits 1 when Stripe could not be read; an invalid config or store \
        exits 2. Running it again changes nothing. For cron: run it daily with --since a few days back.
        """)

    @Option(help: "Take in what Stripe made at or after this RFC 3339 time.")
    var since: String

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    func request() -> (method: String, params: [(String, JSONValue)]) {
      ("reconcileStripe", [("since", .string(since))])
    }

    /// As every back-office one-shot, but a failed result (Stripe not read) exits 1: cron sees it.
    func run() throws {
      run(exitingOneWhen: { $0["status"] == .string("failed") })
    }
  }
}

/// `payservice billing run`: the billing run, for cron or a systemd timer.
struct BillingCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "billing",
    abstract: "Collect what agreements promised (the back office's runBilling).",
    subcommands: [Run.self])

  struct Run: BackOfficeOneShot {
    static let configuration = CommandConfiguration(
      abstract: "Charge every agreement payment due: subscription periods, pre-orders, retries (runBilling).",
      discussion: """
        Prints the method's result JSON. Exits 0 when every payment due went through (or none was due), 1 when \
        any failed, is pending at the gateway or was skipped (the result lists them), 2 for an invalid config or \
        store. Runs that overlap (two hosts, a slow cron) charge each payment once. For cron: every hour, or a \
        systemd timer with Persistent=true.
        """)

    @Option(help: "Charge payments due at or before this RFC 3339 time (default and latest: now).")
    var until: String?

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    func request() -> (method: String, params: [(String, JSONValue)]) {
      ("runBilling", until.map { [("until", JSONValue.string($0))] } ?? [])
    }

    /// As every back-office one-shot, but a run that left a payment failed, pending or skipped exits 1.
    func run() throws {
      run(exitingOneWhen: { result in
        ["failed", "pending", "skipped"].contains { result[$0] != .number("0") && result[$0] != nil }
      })
    }
  }
}

/// `payservice stock list|adjust|set`: the store's stock, by hand.
struct StockCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stock",
    abstract: "List or change the store's stock (the back office's listStock and adjustStock).",
    discussion: """
      Each prints the method's result JSON (exit 0), or its error object (exit 1), like payservice call; \
      an invalid config or store exits 2. The config seeds a product's stock only the first time the store \
      sees it: after that, change it here.
      """,
    subcommands: [List.self, Adjust.self, Set.self])

  struct List: BackOfficeOneShot {
    static let configuration = CommandConfiguration(
      abstract: "Every product's stock on hand and sold, beside the config's seed (listStock).")

    @Argument(help: "Only this sku, with its stock changes made by hand.")
    var sku: String?

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    func request() -> (method: String, params: [(String, JSONValue)]) {
      ("listStock", sku.map { [("sku", .string($0))] } ?? [])
    }
  }

  /// What every change of stock takes besides its sku and number: the key, the reason, where.
  struct Change: ParsableArguments {
    @Option(help: "Your idempotency key for this change: the same id again changes nothing more.")
    var id: String

    @Option(help: "Why, for the stock's history.")
    var reason: String

    @OptionGroup var service: ServiceOptions

    @Flag(help: "Indent the JSON printed.")
    var pretty = false

    /// adjustStock with `sku` and `amount` (`delta` or `set`).
    func request(sku: String, _ amount: (String, Int)) -> (method: String, params: [(String, JSONValue)]) {
      (
        "adjustStock",
        [
          ("adjustmentId", .string(id)), ("sku", .string(sku)), (amount.0, .number(String(amount.1))),
          ("reason", .string(reason)),
        ]
      )
    }
  }

  struct Adjust: BackOfficeOneShot {
    static let configuration = CommandConfiguration(
      abstract: "Add units to a sku's stock on hand, or take them off with a negative DELTA (adjustStock).")

    @Argument(help: "The product.")
    var sku: String

    @Argument(help: "Units to add; negative to take off (write it after --, as in -- -3).")
    var delta: Int

    @OptionGroup var change: Change

    var service: ServiceOptions { change.service }
    var pretty: Bool { change.pretty }
    func request() -> (method: String, params: [(String, JSONValue)]) { change.request(sku: sku, ("delta", delta)) }
  }

  struct Set: BackOfficeOneShot {
    static let configuration = CommandConfiguration(abstract: "Set a sku's stock on hand to a count (adjustStock).")

    @Argument(help: "The product.")
    var sku: String

    @Argument(help: "The units on hand counted.")
    var quantity: Int

    @OptionGroup var change: Change

    var service: ServiceOptions { change.service }
    var pretty: Bool { change.pretty }
    func request() -> (method: String, params: [(String, JSONValue)]) { change.request(sku: sku, ("set", quantity)) }
  }
}

/// `payservice erase`: one buyer's or one order's personal data erased on request.
struct Erase: BackOfficeOneShot {
  static let configuration = CommandConfiguration(
    abstract: "Erase one buyer's (or one order's) personal data from orders and payments (erasePersonalData).",
    discussion: """
      Names, street lines, localities, email addresses and phone numbers go; country, region, postal prefix \
      and every amount stay for tax and the books. Prints the result JSON like payservice call; "more": true \
      says more payments remain: run it again with another --erasure-id.
      """)

  @Option(help: "The buyer's email address.")
  var emailAddress: String?

  @Option(help: "One order.")
  var orderId: String?

  @Option(help: "Your idempotency key for this erasure: the same id again erases nothing more.")
  var erasureId: String

  @OptionGroup var service: ServiceOptions

  @Flag(help: "Indent the JSON printed.")
  var pretty = false

  func validate() throws {
    if (emailAddress == nil) == (orderId == nil) { throw ValidationError("give exactly one of --email-address and --order-id") }
  }

  func request() -> (method: String, params: [(String, JSONValue)]) {
    var params: [(String, JSONValue)] = [("erasureId", .string(erasureId))]
    if let emailAddress { params.append(("emailAddress", .string(emailAddress))) }
    if let orderId { params.append(("orderId", .string(orderId))) }
    return ("erasePersonalData", params)
  }
}

/// `payservice retention`: erases the personal data older than the config's retention, for a daily timer.
struct Retention: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Erase personal data older than privacy.retainPersonalDataDays (run it daily).",
    discussion: """
      Erases, in batches (--batch, 500 by default), the personal data of every payment authorized more \
      than privacy.retainPersonalDataDays days ago (erasePersonalData with before and limit). Each batch's \
      erasureId is retention-<cutoff>-<n>, so a run repeated for the same cutoff erases nothing twice. \
      Prints one result JSON line per batch; exits 2 when the config sets no retention.
      """)

  @OptionGroup var service: ServiceOptions

  @Option(help: "Payments erased per transaction (1 to 5000).")
  var batch = ErasePersonalData.defaultLimit

  func validate() throws {
    guard (1...ErasePersonalData.maxLimit).contains(batch) else { throw ValidationError("--batch must be 1 to 5000") }
  }

  func run() throws {
    let responses = StdoutGuard.install()
    let session = OneShotSession(service, backOffice: true)
    guard let days = session.context.config.privacy.retainPersonalDataDays else {
      session.close()
      ServeSettings.fail("\(service.config) sets no privacy.retainPersonalDataDays: nothing is past its retention")
    }
    let cutoff = RFC3339.format(session.context.clock.now() - Int64(days) * 86_400)
    var round = 1
    while true {
      let params = OneShotSession.params([
        ("erasureId", .string("retention-\(cutoff)-\(round)")), ("before", .string(cutoff)),
        ("limit", .number(String(self.batch))),
      ])
      let outcome = session.call(method: "erasePersonalData", paramsText: params, pretty: false)
      Call.write(outcome.stdout, to: responses)
      Call.write(outcome.stderr, to: STDERR_FILENO)
      guard outcome.exitCode == 0 else {
        session.close()
        Foundation.exit(outcome.exitCode)
      }
      guard case .object(let result)? = try? JSONParser.parse(outcome.stdout), result["more"] == .bool(true) else { break }
      round += 1
    }
    session.close()
    Foundation.exit(0)
  }
}
